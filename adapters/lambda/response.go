package lambda

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// result is a response as the handler wrote it.
type result struct {
	status int
	header http.Header
	body   []byte // buffered responses only
}

func plainResponse(status int, msg string) result {
	return result{
		status: status,
		header: http.Header{
			"Content-Type":           {"text/plain; charset=utf-8"},
			"X-Content-Type-Options": {"nosniff"},
		},
		body: []byte(msg + "\n"),
	}
}

func internalServerError() result {
	return plainResponse(http.StatusInternalServerError, http.StatusText(http.StatusInternalServerError))
}

// responseHeader implements the header half of http.ResponseWriter with the
// semantics of net/http: the header map is copied when the status is
// written, so later changes have no effect.
type responseHeader struct {
	header       http.Header // the handler's map
	calledHeader bool
	sent         http.Header // the copy taken at WriteHeader
	status       int
	wroteHeader  bool
	head         bool // a HEAD request: writes are discarded
}

func (w *responseHeader) Header() http.Header {
	if w.header == nil {
		w.header = make(http.Header)
	}
	w.calledHeader = true
	return w.header
}

func (w *responseHeader) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	// Same check as net/http.
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	// Informational responses cannot be relayed through Lambda.
	if code <= 199 {
		return
	}
	w.wroteHeader = true
	w.status = code
	if w.calledHeader {
		w.sent = w.header.Clone()
	}
}

// bodyAllowed reports whether the status permits a body, as in net/http.
func (w *responseHeader) bodyAllowed() bool {
	return !(w.status >= 100 && w.status <= 199) && w.status != http.StatusNoContent && w.status != http.StatusNotModified
}

// startBody is the start of every body write: it commits the status (200
// if the handler wrote none) and returns [http.ErrBodyNotAllowed] if that
// status permits no body.
func (w *responseHeader) startBody() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !w.bodyAllowed() {
		return http.ErrBodyNotAllowed
	}
	return nil
}

// sniff sets Content-Type from the first bytes of the body if the handler
// set none, as net/http does. A Content-Type key with no values suppresses
// it.
func (w *responseHeader) sniff(p []byte) {
	if len(p) == 0 {
		return
	}
	if _, ok := w.sent["Content-Type"]; ok {
		return
	}
	if w.sent == nil {
		w.sent = make(http.Header, 1)
	}
	w.sent["Content-Type"] = []string{http.DetectContentType(p)}
}

// bufferedWriter collects the whole response.
type bufferedWriter struct {
	responseHeader
	body bytes.Buffer
}

var (
	_ http.ResponseWriter = (*bufferedWriter)(nil)
	_ http.Flusher        = (*bufferedWriter)(nil)
	_ io.StringWriter     = (*bufferedWriter)(nil)
)

func (w *bufferedWriter) Write(p []byte) (int, error) {
	if err := w.startBody(); err != nil {
		return 0, err
	}
	if w.head {
		return len(p), nil
	}
	return w.body.Write(p)
}

func (w *bufferedWriter) WriteString(s string) (int, error) {
	if err := w.startBody(); err != nil {
		return 0, err
	}
	if w.head {
		return len(s), nil
	}
	return w.body.WriteString(s)
}

// Flush implements [http.Flusher]. A buffered response leaves when the
// handler returns, so Flush only commits the status and headers.
func (w *bufferedWriter) Flush() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
}

// FlushError is Flush for [http.ResponseController].
func (w *bufferedWriter) FlushError() error {
	w.Flush()
	return nil
}

func (w *bufferedWriter) result() result {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	body := w.body.Bytes()
	w.sniff(body[:min(len(body), 512)])
	return result{status: w.status, header: w.sent, body: body}
}

// bufferedResponse converts res into the response type of the integration
// the event came from.
func bufferedResponse(k kind, ev *event, res result) any {
	body, b64 := encodeBody(res.header, res.body)
	switch k {
	case kindAPIGatewayV1:
		return events.APIGatewayProxyResponse{
			StatusCode:        res.status,
			MultiValueHeaders: multiValueHeaders(res.header),
			Body:              body,
			IsBase64Encoded:   b64,
		}
	case kindAPIGatewayV2:
		headers, cookies := singleValueHeaders(res.header, true)
		return events.APIGatewayV2HTTPResponse{
			StatusCode:      res.status,
			Headers:         headers,
			Cookies:         cookies,
			Body:            body,
			IsBase64Encoded: b64,
		}
	case kindFunctionURL:
		headers, cookies := singleValueHeaders(res.header, true)
		return events.LambdaFunctionURLResponse{
			StatusCode:      res.status,
			Headers:         headers,
			Cookies:         cookies,
			Body:            body,
			IsBase64Encoded: b64,
		}
	case kindALB:
		r := events.ALBTargetGroupResponse{
			StatusCode:        res.status,
			StatusDescription: strconv.Itoa(res.status) + " " + http.StatusText(res.status),
			Body:              body,
			IsBase64Encoded:   b64,
		}
		if ev.multiValue() {
			r.MultiValueHeaders = multiValueHeaders(res.header)
		} else {
			r.Headers, _ = singleValueHeaders(res.header, false)
		}
		return r
	}
	// The event's integration is unknown: answer in the format all of them
	// accept.
	headers, _ := singleValueHeaders(res.header, false)
	return events.APIGatewayProxyResponse{
		StatusCode:      res.status,
		Headers:         headers,
		Body:            body,
		IsBase64Encoded: b64,
	}
}

// streamingResponse returns the streaming response for the integration the
// event came from. body is nil if res.body holds the whole body.
func streamingResponse(k kind, res result, body io.Reader) any {
	if body == nil {
		body = bytes.NewReader(res.body)
	}
	if k == kindAPIGatewayV1 {
		return &events.APIGatewayProxyStreamingResponse{
			StatusCode:        res.status,
			MultiValueHeaders: multiValueHeaders(res.header),
			Body:              body,
		}
	}
	headers, cookies := singleValueHeaders(res.header, true)
	return &events.LambdaFunctionURLStreamingResponse{
		StatusCode: res.status,
		Headers:    headers,
		Cookies:    cookies,
		Body:       body,
	}
}

// encodeBody returns the body as the JSON string field of a response, and
// whether it had to be base64-encoded: bodies that are not UTF-8 text of a
// textual content type are.
func encodeBody(h http.Header, body []byte) (string, bool) {
	if len(body) == 0 {
		return "", false
	}
	if isText(h.Get("Content-Type")) && utf8.Valid(body) {
		return string(body), false
	}
	return base64.StdEncoding.EncodeToString(body), true
}

// isText reports whether a body of content type ct is text.
func isText(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	if strings.HasPrefix(mt, "text/") {
		return true // includes text/event-stream
	}
	switch mt {
	case "application/json", "application/x-ndjson", "application/jsonl",
		"application/javascript", "application/ecmascript",
		"application/xml", "application/x-www-form-urlencoded",
		"application/yaml", "application/x-yaml", "application/graphql",
		"image/svg+xml":
		return true
	}
	return strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml") || strings.HasSuffix(mt, "+yaml")
}

// sendable reports whether header key k, with values vs, goes on the wire.
// Trailers cannot be relayed through Lambda.
func sendable(k string, vs []string) bool {
	return len(vs) > 0 && k != "Trailer" && !strings.HasPrefix(k, http.TrailerPrefix)
}

func multiValueHeaders(h http.Header) map[string][]string {
	ok := true
	for k, vs := range h {
		if !sendable(k, vs) {
			ok = false
			break
		}
	}
	if ok {
		return h // the writer's copy, shared to save an allocation
	}
	m := make(map[string][]string, len(h))
	for k, vs := range h {
		if sendable(k, vs) {
			m[k] = vs
		}
	}
	return m
}

// singleValueHeaders joins repeated headers with commas. With cookies set,
// Set-Cookie headers are returned separately, for the cookies field of 2.0
// responses.
func singleValueHeaders(h http.Header, cookies bool) (map[string]string, []string) {
	if len(h) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(h))
	var c []string
	for k, vs := range h {
		switch {
		case !sendable(k, vs):
		case cookies && k == "Set-Cookie":
			c = vs
		case len(vs) == 1:
			m[k] = vs[0]
		default:
			m[k] = strings.Join(vs, ",")
		}
	}
	return m, c
}
