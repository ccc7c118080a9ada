package lambdalocal

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
)

// Integration is the AWS integration a Door imitates: what event a
// request becomes, and how the function's answer becomes the response.
type Integration string

const (
	// FunctionURL is a Lambda Function URL: payload format 2.0 events,
	// buffered or streamed responses.
	FunctionURL Integration = "url"
	// RESTAPI is an API Gateway REST API with the Lambda proxy
	// integration: payload format 1.0 events (multi-value headers and
	// query), buffered responses, or streamed ones with the
	// response-streaming-invocations integration.
	RESTAPI Integration = "apigw-v1"
	// HTTPAPI is an API Gateway HTTP API with payload format 2.0: buffered
	// responses only, and cookies moved out of the headers.
	HTTPAPI Integration = "apigw-v2"
)

// ParseIntegration returns the Integration named s: url, apigw-v1 or
// apigw-v2.
func ParseIntegration(s string) (Integration, error) {
	switch i := Integration(s); i {
	case FunctionURL, RESTAPI, HTTPAPI:
		return i, nil
	}
	return "", fmt.Errorf("unknown integration %q (want url, apigw-v1 or apigw-v2)", s)
}

// InvokeMode is the invoke mode a Door expects the function to answer in,
// as a Function URL's invoke mode or an API Gateway integration's URI sets
// it: a function that answers in the other mode gets 502, as on AWS.
type InvokeMode string

const (
	// Auto accepts buffered and streamed responses.
	Auto InvokeMode = "auto"
	// Buffered is Function URL invoke mode BUFFERED, or the REST API
	// integration .../invocations.
	Buffered InvokeMode = "buffered"
	// Streaming is Function URL invoke mode RESPONSE_STREAM, or the REST
	// API integration .../response-streaming-invocations.
	Streaming InvokeMode = "streaming"
)

// ParseInvokeMode returns the InvokeMode named s (auto, buffered or
// streaming) for an integration: HTTP APIs cannot stream.
func ParseInvokeMode(s string, i Integration) (InvokeMode, error) {
	switch m := InvokeMode(s); m {
	case Auto, Buffered:
		return m, nil
	case Streaming:
		if i == HTTPAPI {
			return "", errors.New("HTTP APIs (apigw-v2) cannot stream responses")
		}
		return m, nil
	}
	return "", fmt.Errorf("unknown invoke mode %q (want auto, buffered or streaming)", s)
}

// maxPayload is Lambda's limit on a synchronous invocation's request and
// buffered response payloads.
const maxPayload = 6 << 20

// Response is a function's answer to an invocation, as it arrives.
type Response struct {
	// ContentType is the content type of the payload: StreamingContentType
	// for a streamed HTTP response, application/json (or "" when unknown)
	// otherwise.
	ContentType string
	// Body is the payload. Closing it ends the invocation on the caller's
	// side; the caller must close it.
	Body io.ReadCloser
	// Trailer returns the trailer of a streamed response (the error type
	// and body of a stream that failed after it started); valid once Body
	// has returned io.EOF. Nil means none.
	Trailer func() http.Header
	// FunctionError is set when the function reported an error (a
	// returned error, a panic): Body is then the error payload,
	// {"errorMessage":...,"errorType":...}. An invoker that cannot tell
	// leaves it unset.
	FunctionError bool
}

// Invoker invokes a Lambda function with an event. *Function is one;
// anything that runs a function (an emulator, the function in process) may
// be another. Invoke must be safe for concurrent use.
type Invoker interface {
	Invoke(ctx context.Context, event []byte) (*Response, error)
}

var _ Invoker = (*Function)(nil)

// Door is an http.Handler that serves HTTP in front of a function the way
// an AWS integration does: each request becomes the integration's event,
// the function is invoked, and its answer (buffered JSON, or a streamed
// prelude and body, passed on chunk by chunk as it arrives) becomes the
// response. Like AWS, it answers only requests addressed to it: a Host
// that is neither a loopback name nor the address the request reached is
// refused (403), so that a DNS-rebinding page cannot reach the function.
//
// The zero Door is not usable: Function must be set. A Door is safe for
// concurrent use; its fields must not change once it serves.
type Door struct {
	// Function runs the invocations.
	Function Invoker
	// Integration is the integration imitated; "" means FunctionURL.
	Integration Integration
	// Mode is the invoke mode expected; "" means Auto.
	Mode InvokeMode
	// Timeout bounds an invocation, from the door's side, at Timeout plus
	// five seconds (the function's own timeout should end it first); 0
	// means DefaultTimeout.
	Timeout time.Duration
	// Logger receives a line per request and the reasons of 502s; nil
	// discards them.
	Logger *slog.Logger
}

func (d *Door) integration() Integration {
	if d.Integration == "" {
		return FunctionURL
	}
	return d.Integration
}

func (d *Door) mode() InvokeMode {
	if d.Mode == "" {
		return Auto
	}
	return d.Mode
}

func (d *Door) log() *slog.Logger {
	if d.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Logger
}

// ServeHTTP serves one request through the function.
func (d *Door) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	status, how := d.serve(w, r)
	d.log().InfoContext(r.Context(), "request", "method", r.Method, "uri", r.RequestURI,
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
func (d *Door) serve(w http.ResponseWriter, r *http.Request) (int, string) {
	log := d.log()
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
	event, err := d.Event(r, body)
	if err != nil {
		log.ErrorContext(r.Context(), "building the event", "err", err)
		return fail(w, http.StatusInternalServerError, "Internal Server Error"), "not invoked"
	}
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout+5*time.Second)
	defer cancel()
	if d.Function == nil {
		log.ErrorContext(r.Context(), "no function (Door.Function is nil)")
		return fail(w, http.StatusBadGateway, "Internal Server Error"), "not invoked"
	}
	res, err := d.Function.Invoke(ctx, event)
	if err != nil {
		return d.invokeFailed(w, r, err)
	}
	defer res.Body.Close()
	if res.ContentType == StreamingContentType {
		return d.passThrough(w, r, res)
	}
	payload, err := io.ReadAll(io.LimitReader(res.Body, 4*maxPayload))
	if err != nil {
		return d.invokeFailed(w, r, err)
	}
	hr, how, err := d.response(payload)
	if err != nil {
		log.ErrorContext(r.Context(), "bad function response", "err", err, "payload", truncate(payload, 512))
		return fail(w, http.StatusBadGateway, "Internal Server Error"), how
	}
	setHeader(w.Header(), hr.headers, hr.multiValueHeaders, hr.cookies)
	w.Header().Set("Content-Length", strconv.Itoa(len(hr.body)))
	w.WriteHeader(hr.status)
	w.Write(hr.body)
	return hr.status, how
}

func (d *Door) invokeFailed(w http.ResponseWriter, r *http.Request, err error) (int, string) {
	log := d.log()
	if r.Context().Err() != nil {
		log.DebugContext(r.Context(), "client gone before the response", "err", err)
		return 499, "client gone" // nginx's code; nothing reaches the client
	}
	if errors.Is(err, ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		log.WarnContext(r.Context(), "invocation timed out", "err", err)
		return fail(w, http.StatusGatewayTimeout, "Endpoint request timed out"), "timeout"
	}
	log.ErrorContext(r.Context(), "invocation failed", "err", err)
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
func (d *Door) passThrough(w http.ResponseWriter, r *http.Request, res *Response) (int, string) {
	log := d.log()
	trailer := func() http.Header {
		if res.Trailer == nil {
			return nil
		}
		return res.Trailer()
	}
	if d.mode() == Buffered {
		log.ErrorContext(r.Context(), "bad function response", "err", "the function streamed its response, but the invoke mode is buffered (build it without Streaming, or make the door streaming)")
		return fail(w, http.StatusBadGateway, "Internal Server Error"), "streamed"
	}
	br := bufio.NewReaderSize(res.Body, 32<<10)
	head, err := readPrelude(br)
	if err != nil {
		if typ := trailer().Get(errorTypeTrailer); typ != "" {
			body, _ := base64.StdEncoding.DecodeString(trailer().Get(errorBodyTrailer))
			err = fmt.Errorf("function error %s: %s", typ, truncate(body, 512))
		}
		log.ErrorContext(r.Context(), "bad streamed response", "err", err)
		return fail(w, http.StatusBadGateway, "Internal Server Error"), "streamed"
	}
	var p prelude
	if err := json.Unmarshal(head, &p); err != nil {
		log.ErrorContext(r.Context(), "bad streamed response", "err", fmt.Errorf("bad prelude: %w", err), "prelude", truncate(head, 512))
		return fail(w, http.StatusBadGateway, "Internal Server Error"), "streamed"
	}
	if p.StatusCode == 0 {
		p.StatusCode = http.StatusOK
	}
	if p.StatusCode < 100 || p.StatusCode > 599 {
		log.ErrorContext(r.Context(), "bad streamed response", "err", fmt.Errorf("invalid statusCode %d", p.StatusCode))
		return fail(w, http.StatusBadGateway, "Internal Server Error"), "streamed"
	}
	multi := p.MultiValueHeaders
	if d.integration() != RESTAPI {
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
				log.DebugContext(r.Context(), "client gone", "err", werr)
				return p.StatusCode, howTruncated
			}
			rc.Flush()
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			if r.Context().Err() != nil { // the client left
				log.DebugContext(r.Context(), "client gone while streaming", "err", err)
			} else {
				log.WarnContext(r.Context(), "streamed response cut short", "err", err)
			}
			return p.StatusCode, howTruncated
		}
	}
	if typ := trailer().Get(errorTypeTrailer); typ != "" {
		body, _ := base64.StdEncoding.DecodeString(trailer().Get(errorBodyTrailer))
		log.WarnContext(r.Context(), "streamed response ended with a function error", "type", typ, "body", truncate(body, 512))
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

// The names the events give the API or Function URL.
const (
	apiID            = "local"
	accountID        = "123456789012"
	functionURLHost  = apiID + ".lambda-url." + DefaultRegion + ".on.aws"
	apiGatewayDomain = apiID + ".execute-api." + DefaultRegion + ".amazonaws.com"
)

// Event returns the event the integration makes of r, whose body is body
// (r.Body is not read), as JSON: an events.APIGatewayProxyRequest of
// aws-lambda-go for RESTAPI, an events.APIGatewayV2HTTPRequest (the
// Function URL's domain name for FunctionURL) otherwise. The front end's
// headers are added (X-Forwarded-For, -Proto, -Port, X-Amzn-Trace-Id); a
// body that is not text is sent in base64.
func (d *Door) Event(r *http.Request, body []byte) ([]byte, error) {
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

	if d.integration() == RESTAPI {
		ev := restEvent{
			Resource:          "/{proxy+}",
			Path:              r.URL.Path,
			HTTPMethod:        r.Method,
			Headers:           map[string]string{},
			MultiValueHeaders: map[string][]string{},
			PathParameters:    map[string]string{"proxy": strings.TrimPrefix(r.URL.Path, "/")},
			Body:              bodyField,
			IsBase64Encoded:   b64,
		}
		ev.RequestContext = restContext{
			AccountID:        accountID,
			ResourceID:       "lf0001",
			Stage:            "test",
			DomainName:       apiGatewayDomain,
			DomainPrefix:     apiID,
			RequestID:        reqID,
			Protocol:         r.Proto,
			ResourcePath:     "/{proxy+}",
			Path:             "/test" + r.URL.Path,
			HTTPMethod:       r.Method,
			RequestTime:      now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			RequestTimeEpoch: now.UnixMilli(),
			APIID:            apiID,
		}
		ev.RequestContext.Identity.SourceIP = sourceIP
		ev.RequestContext.Identity.UserAgent = r.UserAgent()
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
	}

	// Payload format 2.0: Function URLs and HTTP APIs.
	domain := functionURLHost
	if d.integration() == HTTPAPI {
		domain = apiGatewayDomain
	}
	ev := v2Event{
		Version:         "2.0",
		RouteKey:        "$default",
		RawPath:         r.URL.EscapedPath(),
		RawQueryString:  r.URL.RawQuery,
		Headers:         make(map[string]string, len(h)),
		Body:            bodyField,
		IsBase64Encoded: b64,
	}
	ev.RequestContext = v2Context{
		RouteKey:     "$default",
		AccountID:    accountID,
		Stage:        "$default",
		RequestID:    reqID,
		APIID:        apiID,
		DomainName:   domain,
		DomainPrefix: apiID,
		Time:         now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
		TimeEpoch:    now.UnixMilli(),
	}
	ev.RequestContext.HTTP = v2HTTP{Method: r.Method, Path: r.URL.Path, Protocol: r.Proto, SourceIP: sourceIP, UserAgent: r.UserAgent()}
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
		if k == "Cookie" && d.integration() == HTTPAPI {
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

// restEvent is payload format 1.0, with the JSON names of aws-lambda-go's
// events.APIGatewayProxyRequest.
type restEvent struct {
	Resource                        string              `json:"resource"`
	Path                            string              `json:"path"`
	HTTPMethod                      string              `json:"httpMethod"`
	Headers                         map[string]string   `json:"headers"`
	MultiValueHeaders               map[string][]string `json:"multiValueHeaders"`
	QueryStringParameters           map[string]string   `json:"queryStringParameters"`
	MultiValueQueryStringParameters map[string][]string `json:"multiValueQueryStringParameters"`
	PathParameters                  map[string]string   `json:"pathParameters"`
	StageVariables                  map[string]string   `json:"stageVariables"`
	RequestContext                  restContext         `json:"requestContext"`
	Body                            string              `json:"body"`
	IsBase64Encoded                 bool                `json:"isBase64Encoded,omitempty"`
}

type restContext struct {
	AccountID    string `json:"accountId"`
	ResourceID   string `json:"resourceId"`
	Stage        string `json:"stage"`
	DomainName   string `json:"domainName"`
	DomainPrefix string `json:"domainPrefix"`
	RequestID    string `json:"requestId"`
	Protocol     string `json:"protocol"`
	Identity     struct {
		SourceIP  string `json:"sourceIp"`
		UserAgent string `json:"userAgent"`
	} `json:"identity"`
	ResourcePath     string         `json:"resourcePath"`
	Path             string         `json:"path"`
	Authorizer       map[string]any `json:"authorizer"`
	HTTPMethod       string         `json:"httpMethod"`
	RequestTime      string         `json:"requestTime"`
	RequestTimeEpoch int64          `json:"requestTimeEpoch"`
	APIID            string         `json:"apiId"`
}

// v2Event is payload format 2.0, with the JSON names of aws-lambda-go's
// events.APIGatewayV2HTTPRequest (and LambdaFunctionURLRequest).
type v2Event struct {
	Version               string            `json:"version"`
	RouteKey              string            `json:"routeKey"`
	RawPath               string            `json:"rawPath"`
	RawQueryString        string            `json:"rawQueryString"`
	Cookies               []string          `json:"cookies,omitempty"`
	Headers               map[string]string `json:"headers"`
	QueryStringParameters map[string]string `json:"queryStringParameters,omitempty"`
	RequestContext        v2Context         `json:"requestContext"`
	Body                  string            `json:"body,omitempty"`
	IsBase64Encoded       bool              `json:"isBase64Encoded"`
}

type v2Context struct {
	RouteKey     string `json:"routeKey"`
	AccountID    string `json:"accountId"`
	Stage        string `json:"stage"`
	RequestID    string `json:"requestId"`
	APIID        string `json:"apiId"`
	DomainName   string `json:"domainName"`
	DomainPrefix string `json:"domainPrefix"`
	Time         string `json:"time"`
	TimeEpoch    int64  `json:"timeEpoch"`
	HTTP         v2HTTP `json:"http"`
}

type v2HTTP struct {
	Method    string `json:"method"`
	Path      string `json:"path"`
	Protocol  string `json:"protocol"`
	SourceIP  string `json:"sourceIp"`
	UserAgent string `json:"userAgent"`
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

// prelude is the head of a streamed response (StreamingContentType).
type prelude struct {
	StatusCode        int                 `json:"statusCode"`
	Headers           map[string]string   `json:"headers"`
	MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
	Cookies           []string            `json:"cookies"`
}

var preludeEnd = make([]byte, 8)

// response converts the function's whole payload. It returns how the
// function answered ("streamed", "buffered", "function error"), for the
// log.
func (d *Door) response(payload []byte) (httpResponse, string, error) {
	// A streamed response is a JSON prelude, 8 NUL bytes and the body; a
	// buffered one is a JSON document. An invoker that buffers streams (the
	// Runtime Interface Emulator) does not say which: look.
	dec := json.NewDecoder(bytes.NewReader(payload))
	var first json.RawMessage
	if err := dec.Decode(&first); err == nil {
		rest := payload[dec.InputOffset():]
		if bytes.HasPrefix(rest, preludeEnd) {
			if d.mode() == Buffered {
				return httpResponse{}, "streamed", errors.New("the function streamed its response, but the invoke mode is buffered (build it without Streaming, or make the door streaming)")
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
	if d.mode() == Streaming {
		return httpResponse{}, "buffered", errors.New("the function answered buffered, but the invoke mode is streaming (build it with Streaming, or make the door buffered)")
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
		if d.integration() == RESTAPI {
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
	if d.integration() == RESTAPI {
		out.multiValueHeaders = res.MultiValueHeaders
	} else {
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
