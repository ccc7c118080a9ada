package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// Door is the integration the front door imitates.
type Door string

const (
	DoorFunctionURL  Door = "url"      // Lambda Function URL
	DoorAPIGatewayV1 Door = "apigw-v1" // API Gateway REST API, Lambda proxy integration
	DoorAPIGatewayV2 Door = "apigw-v2" // API Gateway HTTP API, payload format 2.0
)

func parseDoor(s string) (Door, error) {
	switch d := Door(s); d {
	case DoorFunctionURL, DoorAPIGatewayV1, DoorAPIGatewayV2:
		return d, nil
	}
	return "", fmt.Errorf("unknown door %q (want url, apigw-v1 or apigw-v2)", s)
}

// Mode is the invoke mode the front door expects the function to answer in.
type Mode string

const (
	ModeAuto      Mode = "auto"      // accept buffered and streamed responses
	ModeBuffered  Mode = "buffered"  // Function URL BUFFERED, REST API /invocations
	ModeStreaming Mode = "streaming" // Function URL RESPONSE_STREAM, REST API response-streaming-invocations
)

func parseMode(s string, d Door) (Mode, error) {
	switch m := Mode(s); m {
	case ModeAuto, ModeBuffered:
		return m, nil
	case ModeStreaming:
		if d == DoorAPIGatewayV2 {
			return "", errors.New("HTTP APIs (apigw-v2) cannot stream responses")
		}
		return m, nil
	}
	return "", fmt.Errorf("unknown mode %q (want auto, buffered or streaming)", s)
}

// maxPayload is Lambda's limit on a synchronous invocation's request and
// response payloads.
const maxPayload = 6 << 20

// invoker invokes the function with an event and returns the raw response
// payload.
type invoker interface {
	invoke(ctx context.Context, event []byte) ([]byte, error)
}

// errTimeout is returned by an invoker when the function timed out.
var errTimeout = errors.New("function timed out")

// frontDoor turns HTTP requests into events, invokes the function, and turns
// its responses back into HTTP responses, as the AWS integration it imitates
// does.
type frontDoor struct {
	door    Door
	mode    Mode
	timeout time.Duration
	fn      invoker
	log     *slog.Logger
}

func (d *frontDoor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	status, how := d.serve(w, r)
	d.log.InfoContext(r.Context(), "request", "method", r.Method, "uri", r.RequestURI,
		"status", status, "response", how, "duration", time.Since(start).Round(time.Microsecond))
	if how == howTruncated {
		// A streamed response that ended with an error: the client sees it
		// cut short, as from Lambda.
		panic(http.ErrAbortHandler)
	}
}

// howTruncated is how a streamed response that failed after it started
// was answered.
const howTruncated = "streamed, truncated"

// serve handles one request and returns the status it sent and how the
// function answered, for the log.
func (d *frontDoor) serve(w http.ResponseWriter, r *http.Request) (int, string) {
	if !ownHost(r) {
		return fail(w, http.StatusForbidden, "Forbidden"), "not invoked: foreign Host " + r.Host
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPayload))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return fail(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large"), "not invoked"
		}
		return fail(w, http.StatusBadRequest, "Bad Request"), "not invoked"
	}
	event, err := d.event(r, body)
	if err != nil {
		d.log.ErrorContext(r.Context(), "building the event", "err", err)
		return fail(w, http.StatusInternalServerError, "Internal Server Error"), "not invoked"
	}
	ctx, cancel := context.WithTimeout(r.Context(), d.timeout+5*time.Second)
	defer cancel()
	var payload []byte
	if s, ok := d.fn.(streamInvoker); ok {
		live, err := s.invokeStream(ctx, event)
		if err != nil {
			return d.invokeFailed(w, r, err)
		}
		defer live.release()
		if live.contentType == streamingContentType {
			return d.passThrough(w, r, live)
		}
		if payload, err = io.ReadAll(io.LimitReader(live.body, 4*maxPayload)); err != nil {
			return d.invokeFailed(w, r, err)
		}
	} else if payload, err = d.fn.invoke(ctx, event); err != nil {
		return d.invokeFailed(w, r, err)
	}
	res, how, err := d.response(payload)
	if err != nil {
		d.log.ErrorContext(r.Context(), "bad function response", "err", err, "payload", truncate(payload, 512))
		return fail(w, http.StatusBadGateway, "Internal Server Error"), how
	}
	setHeader(w.Header(), res.headers, res.multiValueHeaders, res.cookies)
	w.Header().Set("Content-Length", strconv.Itoa(len(res.body)))
	w.WriteHeader(res.status)
	w.Write(res.body)
	return res.status, how
}

func (d *frontDoor) invokeFailed(w http.ResponseWriter, r *http.Request, err error) (int, string) {
	if r.Context().Err() != nil {
		d.log.DebugContext(r.Context(), "client gone before the response", "err", err)
		return 499, "client gone" // nginx's code; nothing reaches the client
	}
	if errors.Is(err, errTimeout) || errors.Is(err, context.DeadlineExceeded) {
		d.log.WarnContext(r.Context(), "invocation timed out", "err", err)
		return fail(w, http.StatusGatewayTimeout, "Endpoint request timed out"), "timeout"
	}
	d.log.ErrorContext(r.Context(), "invocation failed", "err", err)
	return fail(w, http.StatusBadGateway, "Internal Server Error"), "invoke error"
}

// setHeader sets the response headers of a function's answer in h.
func setHeader(h http.Header, headers map[string]string, multi map[string][]string, cookies []string) {
	for k, v := range headers {
		h.Set(k, v)
	}
	for k, vs := range multi {
		h.Del(k) // multiValueHeaders win over headers, as in API Gateway
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	for _, c := range cookies {
		h.Add("Set-Cookie", c)
	}
	// The front end frames the body itself.
	for _, k := range []string{"Content-Length", "Transfer-Encoding", "Connection"} {
		h.Del(k)
	}
}

// maxPrelude bounds the JSON head of a streamed response.
const maxPrelude = 64 << 10

// passThrough sends a streamed response to the client as it arrives: the
// status and headers of the prelude, then each chunk of the body as soon as
// the function has sent it.
func (d *frontDoor) passThrough(w http.ResponseWriter, r *http.Request, live *liveResponse) (int, string) {
	if d.mode == ModeBuffered {
		d.log.ErrorContext(r.Context(), "bad function response", "err", "the function streamed its response, but the invoke mode is buffered (build it without Streaming, or run the door with -mode streaming)")
		return fail(w, http.StatusBadGateway, "Internal Server Error"), "streamed"
	}
	br := bufio.NewReaderSize(live.body, 32<<10)
	head, err := readPrelude(br)
	if err != nil {
		if typ := live.trailer().Get(errorTypeTrailer); typ != "" {
			body, _ := base64.StdEncoding.DecodeString(live.trailer().Get(errorBodyTrailer))
			err = fmt.Errorf("function error %s: %s", typ, truncate(body, 512))
		}
		d.log.ErrorContext(r.Context(), "bad streamed response", "err", err)
		return fail(w, http.StatusBadGateway, "Internal Server Error"), "streamed"
	}
	var p prelude
	if err := json.Unmarshal(head, &p); err != nil {
		d.log.ErrorContext(r.Context(), "bad streamed response", "err", fmt.Errorf("bad prelude: %w", err), "prelude", truncate(head, 512))
		return fail(w, http.StatusBadGateway, "Internal Server Error"), "streamed"
	}
	if p.StatusCode == 0 {
		p.StatusCode = http.StatusOK
	}
	if p.StatusCode < 100 || p.StatusCode > 599 {
		d.log.ErrorContext(r.Context(), "bad streamed response", "err", fmt.Errorf("invalid statusCode %d", p.StatusCode))
		return fail(w, http.StatusBadGateway, "Internal Server Error"), "streamed"
	}
	multi := p.MultiValueHeaders
	if d.door != DoorAPIGatewayV1 {
		multi = nil
	}
	setHeader(w.Header(), p.Headers, multi, p.Cookies)
	w.WriteHeader(p.StatusCode)
	rc := http.NewResponseController(w)
	rc.Flush()
	buf := make([]byte, 32<<10)
	for {
		n, err := br.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				d.log.DebugContext(r.Context(), "client gone", "err", werr)
				return p.StatusCode, howTruncated
			}
			rc.Flush()
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			if r.Context().Err() != nil { // the client left, and the function was stopped
				d.log.DebugContext(r.Context(), "client gone while streaming", "err", err)
			} else {
				d.log.WarnContext(r.Context(), "streamed response cut short", "err", err)
			}
			return p.StatusCode, howTruncated
		}
	}
	if typ := live.trailer().Get(errorTypeTrailer); typ != "" {
		body, _ := base64.StdEncoding.DecodeString(live.trailer().Get(errorBodyTrailer))
		d.log.WarnContext(r.Context(), "streamed response ended with a function error", "type", typ, "body", truncate(body, 512))
		return p.StatusCode, howTruncated
	}
	return p.StatusCode, "streamed"
}

// readPrelude reads the JSON head of a streamed response, up to the 8 NUL
// bytes that end it (JSON text never holds a NUL byte).
func readPrelude(br *bufio.Reader) ([]byte, error) {
	var head []byte
	for len(head) < maxPrelude+len(preludeEnd) {
		b, err := br.ReadByte()
		if err == io.EOF {
			return nil, errors.New("the stream ended before the end of its prelude")
		}
		if err != nil {
			return nil, err
		}
		head = append(head, b)
		if b == 0 && bytes.HasSuffix(head, preludeEnd) {
			return head[:len(head)-len(preludeEnd)], nil
		}
	}
	return nil, errors.New("prelude too long")
}

// ownHost reports whether r is addressed to the door: AWS routes a request
// to a function by its Host name (the Function URL's or the API's domain),
// so a function never sees a request for another name, such as a DNS
// rebinding attacker's. The door's names are the loopback names and the
// address it was reached on.
func ownHost(r *http.Request) bool {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
	return ok && local.IP.Equal(ip)
}

func fail(w http.ResponseWriter, status int, msg string) int {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"message": msg})
	return status
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// event builds the event for r, as the integration would.
func (d *frontDoor) event(r *http.Request, body []byte) ([]byte, error) {
	now := time.Now()
	reqID := newID()
	sourceIP, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		sourceIP = r.RemoteAddr
	}
	_, port, _ := net.SplitHostPort(r.Host)
	if port == "" {
		port = "80"
	}
	b64 := !isText(r.Header.Get("Content-Type"), body)
	bodyField := string(body)
	if b64 && len(body) > 0 {
		bodyField = base64.StdEncoding.EncodeToString(body)
	} else if len(body) == 0 {
		b64 = false
	}

	// The front end adds these, as AWS does (the scheme is the one the
	// client used: plain HTTP).
	h := r.Header.Clone()
	h.Set("X-Forwarded-For", sourceIP)
	h.Set("X-Forwarded-Proto", "http")
	h.Set("X-Forwarded-Port", port)
	h.Set("X-Amzn-Trace-Id", "Root=1-"+strconv.FormatInt(now.Unix(), 16)+"-"+reqID[:24])
	h.Set("Host", r.Host)

	switch d.door {
	case DoorAPIGatewayV1:
		ev := events.APIGatewayProxyRequest{
			Resource:          "/{proxy+}",
			Path:              r.URL.Path,
			HTTPMethod:        r.Method,
			Headers:           map[string]string{},
			MultiValueHeaders: map[string][]string{},
			PathParameters:    map[string]string{"proxy": strings.TrimPrefix(r.URL.Path, "/")},
			RequestContext: events.APIGatewayProxyRequestContext{
				AccountID:        "123456789012",
				ResourceID:       "lf0001",
				Stage:            "test",
				DomainName:       "lambdafront.execute-api.us-east-1.amazonaws.com",
				DomainPrefix:     "lambdafront",
				RequestID:        reqID,
				Protocol:         r.Proto,
				Identity:         events.APIGatewayRequestIdentity{SourceIP: sourceIP, UserAgent: r.UserAgent()},
				ResourcePath:     "/{proxy+}",
				Path:             "/test" + r.URL.Path,
				HTTPMethod:       r.Method,
				RequestTime:      now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
				RequestTimeEpoch: now.UnixMilli(),
				APIID:            "lambdafront",
			},
			Body:            bodyField,
			IsBase64Encoded: b64,
		}
		for k, vs := range h {
			ev.Headers[k] = vs[len(vs)-1] // the last value, as API Gateway does
			ev.MultiValueHeaders[k] = vs
		}
		if q := r.URL.Query(); len(q) > 0 {
			ev.QueryStringParameters = make(map[string]string, len(q))
			for k, vs := range q {
				ev.QueryStringParameters[k] = vs[len(vs)-1]
			}
			ev.MultiValueQueryStringParameters = q
		}
		return json.Marshal(ev)

	default: // payload format 2.0: Function URLs and HTTP APIs
		domain := "lambdafront.lambda-url.us-east-1.on.aws"
		if d.door == DoorAPIGatewayV2 {
			domain = "lambdafront.execute-api.us-east-1.amazonaws.com"
		}
		ev := events.APIGatewayV2HTTPRequest{
			Version:        "2.0",
			RouteKey:       "$default",
			RawPath:        r.URL.EscapedPath(),
			RawQueryString: r.URL.RawQuery,
			Headers:        make(map[string]string, len(h)),
			RequestContext: events.APIGatewayV2HTTPRequestContext{
				RouteKey:     "$default",
				AccountID:    "123456789012",
				Stage:        "$default",
				RequestID:    reqID,
				APIID:        "lambdafront",
				DomainName:   domain,
				DomainPrefix: "lambdafront",
				Time:         now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
				TimeEpoch:    now.UnixMilli(),
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
					Method:    r.Method,
					Path:      r.URL.Path,
					Protocol:  r.Proto,
					SourceIP:  sourceIP,
					UserAgent: r.UserAgent(),
				},
			},
			Body:            bodyField,
			IsBase64Encoded: b64,
		}
		for _, c := range r.Header.Values("Cookie") {
			for part := range strings.SplitSeq(c, ";") {
				if part = strings.TrimSpace(part); part != "" {
					ev.Cookies = append(ev.Cookies, part)
				}
			}
		}
		for k, vs := range h {
			// HTTP APIs move cookies to the cookies list; Function URLs
			// keep the header too.
			if k == "Cookie" && d.door == DoorAPIGatewayV2 {
				continue
			}
			ev.Headers[strings.ToLower(k)] = strings.Join(vs, ",")
		}
		if q := r.URL.Query(); len(q) > 0 {
			ev.QueryStringParameters = make(map[string]string, len(q))
			for k, vs := range q {
				ev.QueryStringParameters[k] = strings.Join(vs, ",")
			}
		}
		return json.Marshal(ev)
	}
}

// isText reports whether a request body is sent as text rather than base64,
// as Function URLs and HTTP APIs decide; for REST APIs this is the behaviour
// of binary media types set to everything that is not text.
func isText(contentType string, body []byte) bool {
	ct := strings.ToLower(contentType)
	textual := strings.HasPrefix(ct, "text/") || strings.Contains(ct, "json") ||
		strings.Contains(ct, "xml") || strings.Contains(ct, "javascript") ||
		strings.HasPrefix(ct, "application/x-www-form-urlencoded")
	return textual && utf8.Valid(body)
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// httpResponse is the HTTP response the integration makes of the
// function's answer.
type httpResponse struct {
	status            int
	headers           map[string]string
	multiValueHeaders map[string][]string
	cookies           []string
	body              []byte
}

// prelude is the head of a streamed response
// (application/vnd.awslambda.http-integration-response).
type prelude struct {
	StatusCode        int                 `json:"statusCode"`
	Headers           map[string]string   `json:"headers"`
	MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
	Cookies           []string            `json:"cookies"`
}

var preludeEnd = make([]byte, 8)

// response converts the function's payload. It returns how the function
// answered ("streamed", "buffered", "function error"), for the log.
func (d *frontDoor) response(payload []byte) (httpResponse, string, error) {
	// A streamed response is a JSON prelude, 8 NUL bytes and the body; a
	// buffered one is a JSON document. The emulator does not say which, so
	// look.
	dec := json.NewDecoder(bytes.NewReader(payload))
	var first json.RawMessage
	if err := dec.Decode(&first); err == nil {
		rest := payload[dec.InputOffset():]
		if bytes.HasPrefix(rest, preludeEnd) {
			if d.mode == ModeBuffered {
				return httpResponse{}, "streamed", errors.New("the function streamed its response, but the invoke mode is buffered (build it without Streaming, or run the door with -mode streaming)")
			}
			var p prelude
			if err := json.Unmarshal(first, &p); err != nil {
				return httpResponse{}, "streamed", fmt.Errorf("bad prelude: %w", err)
			}
			if p.StatusCode == 0 {
				p.StatusCode = http.StatusOK
			}
			return httpResponse{
				status:            p.StatusCode,
				headers:           p.Headers,
				multiValueHeaders: p.MultiValueHeaders,
				cookies:           p.Cookies,
				body:              rest[len(preludeEnd):],
			}, "streamed", nil
		}
	}

	var fnErr struct {
		ErrorMessage *string `json:"errorMessage"`
		ErrorType    string  `json:"errorType"`
		StatusCode   *int    `json:"statusCode"`
	}
	if json.Unmarshal(payload, &fnErr) == nil && fnErr.ErrorMessage != nil && fnErr.StatusCode == nil {
		return httpResponse{}, "function error", fmt.Errorf("function error %s: %s", fnErr.ErrorType, *fnErr.ErrorMessage)
	}
	if d.mode == ModeStreaming {
		return httpResponse{}, "buffered", errors.New("the function answered buffered, but the invoke mode is streaming (build it with Streaming, or run the door with -mode buffered)")
	}

	var res struct {
		StatusCode        *int                `json:"statusCode"`
		Headers           map[string]string   `json:"headers"`
		MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
		Cookies           []string            `json:"cookies"`
		Body              *string             `json:"body"`
		IsBase64Encoded   bool                `json:"isBase64Encoded"`
	}
	err := json.Unmarshal(payload, &res)
	if err != nil || res.StatusCode == nil {
		if d.door == DoorAPIGatewayV1 {
			return httpResponse{}, "buffered", errors.New("malformed Lambda proxy response: no statusCode")
		}
		// Payload format 2.0 takes any other answer as a JSON body.
		return httpResponse{
			status:  http.StatusOK,
			headers: map[string]string{"Content-Type": "application/json"},
			body:    payload,
		}, "buffered", nil
	}
	out := httpResponse{status: *res.StatusCode, headers: res.Headers}
	switch d.door {
	case DoorAPIGatewayV1:
		out.multiValueHeaders = res.MultiValueHeaders
	default:
		out.cookies = res.Cookies
	}
	if res.Body != nil {
		out.body = []byte(*res.Body)
		if res.IsBase64Encoded {
			if out.body, err = base64.StdEncoding.DecodeString(*res.Body); err != nil {
				return httpResponse{}, "buffered", fmt.Errorf("body is not valid base64: %w", err)
			}
		}
	}
	if out.status < 100 || out.status > 599 {
		return httpResponse{}, "buffered", fmt.Errorf("invalid statusCode %d", out.status)
	}
	return out, "buffered", nil
}
