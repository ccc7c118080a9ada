package lambda

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-lambda-go/events"
)

// kind is the integration an event comes from.
type kind uint8

const (
	kindUnknown      kind = iota
	kindAPIGatewayV1      // REST API, or HTTP API payload format 1.0
	kindAPIGatewayV2      // HTTP API payload format 2.0
	kindFunctionURL
	kindALB
)

// event holds the fields of every supported event shape that the request is
// built from, so that the payload is decoded once. The complete event is
// decoded only if the handler asks for it (RequestFromContext).
type event struct {
	Version                         string              `json:"version"`
	Resource                        string              `json:"resource"`
	HTTPMethod                      string              `json:"httpMethod"`
	Path                            string              `json:"path"`
	RawPath                         string              `json:"rawPath"`
	RawQueryString                  string              `json:"rawQueryString"`
	Cookies                         []string            `json:"cookies"`
	Headers                         map[string]string   `json:"headers"`
	MultiValueHeaders               map[string][]string `json:"multiValueHeaders"`
	QueryStringParameters           map[string]string   `json:"queryStringParameters"`
	MultiValueQueryStringParameters map[string][]string `json:"multiValueQueryStringParameters"`
	RequestContext                  struct {
		DomainName string `json:"domainName"`
		Protocol   string `json:"protocol"` // 1.0
		Identity   struct {
			SourceIP string `json:"sourceIp"`
		} `json:"identity"` // 1.0
		HTTP *struct {
			Method   string `json:"method"`
			Protocol string `json:"protocol"`
			SourceIP string `json:"sourceIp"`
		} `json:"http"` // 2.0
		ELB *struct{} `json:"elb"` // ALB
	} `json:"requestContext"`
	Body            string `json:"body"`
	IsBase64Encoded bool   `json:"isBase64Encoded"`
	// Task is set in task events only (see task.go).
	Task json.RawMessage `json:"mcpfnTask"`
}

func (ev *event) kind() kind {
	switch {
	case ev.RequestContext.ELB != nil:
		return kindALB
	case ev.Version == "2.0" || ev.RequestContext.HTTP != nil:
		// Function URLs send the same payload as HTTP APIs; only the domain
		// name tells them apart (<url-id>.lambda-url.<region>.on.aws).
		if strings.Contains(ev.RequestContext.DomainName, ".lambda-url.") {
			return kindFunctionURL
		}
		return kindAPIGatewayV2
	case ev.HTTPMethod != "" || ev.Resource != "" || ev.Path != "":
		return kindAPIGatewayV1
	}
	return kindUnknown
}

// multiValue reports whether an ALB event came from a target group with
// multi-value headers enabled; the response must then use them too.
func (ev *event) multiValue() bool { return ev.MultiValueHeaders != nil }

// runtimeTraceIDKey is the context key under which aws-lambda-go's
// invoke loop stores the invocation's Lambda-Runtime-Trace-Id (a plain
// string key, its choice; it also sets _X_AMZN_TRACE_ID, an environment
// variable of the process that library code does not read).
const runtimeTraceIDKey = "x-amzn-trace-id"

// request builds the request for ev. It returns a non-empty message, safe
// to send to the client, if the event is malformed.
func (ev *event) request(ctx context.Context, k kind) (*http.Request, string) {
	var method, proto, sourceIP string
	if k == kindAPIGatewayV2 || k == kindFunctionURL {
		if h := ev.RequestContext.HTTP; h != nil {
			method, proto, sourceIP = h.Method, h.Protocol, h.SourceIP
		}
	} else {
		method, proto, sourceIP = ev.HTTPMethod, ev.RequestContext.Protocol, ev.RequestContext.Identity.SourceIP
	}
	if method == "" {
		return nil, "lambda: event has no HTTP method"
	}
	var body io.Reader
	var n int
	switch {
	case ev.Body == "":
	case ev.IsBase64Encoded:
		b, err := base64.StdEncoding.DecodeString(ev.Body)
		if err != nil {
			return nil, "lambda: event body is not valid base64"
		}
		body, n = bytes.NewReader(b), len(b)
	default:
		body, n = strings.NewReader(ev.Body), len(ev.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, "", nil)
	if err != nil {
		return nil, "lambda: event has an invalid HTTP method"
	}

	switch k {
	case kindAPIGatewayV1:
		// API Gateway decodes the path and the query parameters.
		req.URL.Path = ev.Path
		if req.URL.Path == "" {
			req.URL.Path = "/"
		}
		req.URL.RawQuery = encodeQuery(ev.MultiValueQueryStringParameters, ev.QueryStringParameters)
	case kindALB:
		// The load balancer passes the path and the query parameters as
		// they were received, percent-encoded.
		path := ev.Path
		if path == "" {
			path = "/"
		}
		u, err := url.ParseRequestURI(joinQuery(path, rawQuery(ev.MultiValueQueryStringParameters, ev.QueryStringParameters)))
		if err != nil {
			return nil, "lambda: event has an invalid path"
		}
		req.URL = u
	default:
		path := ev.RawPath
		if path == "" {
			path = "/"
		}
		u, err := url.ParseRequestURI(joinQuery(path, ev.RawQueryString))
		if err != nil {
			return nil, "lambda: event has an invalid path"
		}
		req.URL = u
	}
	req.RequestURI = req.URL.RequestURI()
	if major, minor, ok := http.ParseHTTPVersion(proto); ok {
		req.Proto, req.ProtoMajor, req.ProtoMinor = proto, major, minor
	}

	h := req.Header
	if len(ev.MultiValueHeaders) > 0 {
		for k, vs := range ev.MultiValueHeaders {
			k = http.CanonicalHeaderKey(k)
			if prev, ok := h[k]; ok { // the same name in another case
				h[k] = append(slices.Clip(prev), vs...)
			} else {
				h[k] = slices.Clip(vs)
			}
		}
	} else {
		// One backing array for all the values, as net/textproto does.
		values := make([]string, 0, len(ev.Headers))
		for k, v := range ev.Headers {
			k = http.CanonicalHeaderKey(k)
			if vs, ok := h[k]; ok { // the same name in another case
				h[k] = append(vs, v)
				continue
			}
			values = append(values, v)
			h[k] = values[len(values)-1 : len(values) : len(values)]
		}
	}
	// The invocation's X-Ray trace header (the Runtime API's
	// Lambda-Runtime-Trace-Id, which aws-lambda-go puts in the context) is
	// the request's X-Amzn-Trace-Id, replacing the one the front sent: it
	// names the function's segment in the same trace, so that a tracing
	// middleware links its spans into AWS's view.
	if id, _ := ctx.Value(runtimeTraceIDKey).(string); id != "" {
		h["X-Amzn-Trace-Id"] = []string{id}
	}
	if len(ev.Cookies) > 0 && h.Get("Cookie") == "" {
		h.Set("Cookie", strings.Join(ev.Cookies, "; "))
	}
	// As in a request received by net/http, Host is a field, not a header.
	req.Host = h.Get("Host")
	delete(h, "Host")
	if req.Host == "" {
		req.Host = ev.RequestContext.DomainName
	}
	req.URL.Host = ""

	if k == kindALB {
		sourceIP = lastForwardedFor(h)
	}
	if sourceIP != "" {
		req.RemoteAddr = net.JoinHostPort(sourceIP, "0")
	}

	if body == nil {
		req.Body = http.NoBody
	} else {
		req.Body = io.NopCloser(body)
		req.ContentLength = int64(n)
	}
	return req, ""
}

func joinQuery(path, query string) string {
	if query == "" {
		return path
	}
	return path + "?" + query
}

// encodeQuery encodes decoded query parameters, preferring the multi-value
// ones.
func encodeQuery(multi map[string][]string, single map[string]string) string {
	if len(multi) > 0 {
		return url.Values(multi).Encode()
	}
	if len(single) == 0 {
		return ""
	}
	v := make(url.Values, len(single))
	for k, s := range single {
		v[k] = []string{s}
	}
	return v.Encode()
}

// rawQuery joins query parameters that are still percent-encoded, preferring
// the multi-value ones, in key order.
func rawQuery(multi map[string][]string, single map[string]string) string {
	var b strings.Builder
	add := func(k, v string) {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
	}
	if len(multi) > 0 {
		for _, k := range slices.Sorted(maps.Keys(multi)) {
			for _, v := range multi[k] {
				add(k, v)
			}
		}
		return b.String()
	}
	for _, k := range slices.Sorted(maps.Keys(single)) {
		add(k, single[k])
	}
	return b.String()
}

// lastForwardedFor returns the address the load balancer appended to
// X-Forwarded-For: the client it received the request from.
func lastForwardedFor(h http.Header) string {
	vs := h.Values("X-Forwarded-For")
	if len(vs) == 0 {
		return ""
	}
	last := vs[len(vs)-1]
	if i := strings.LastIndexByte(last, ','); i >= 0 {
		last = last[i+1:]
	}
	return strings.TrimSpace(last)
}

// eventValue is the event in a request's context. Events received by Wrap
// keep their payload and are decoded on demand.
type eventValue struct {
	kind kind
	raw  json.RawMessage // nil if v was set by NewContext
	once sync.Once
	v    any
}

func (e *eventValue) get() any {
	if e.raw == nil {
		return e.v
	}
	e.once.Do(func() {
		var v any
		switch e.kind {
		case kindAPIGatewayV1:
			v = new(events.APIGatewayProxyRequest)
		case kindAPIGatewayV2:
			v = new(events.APIGatewayV2HTTPRequest)
		case kindFunctionURL:
			v = new(events.LambdaFunctionURLRequest)
		case kindALB:
			v = new(events.ALBTargetGroupRequest)
		default:
			return
		}
		if json.Unmarshal(e.raw, v) == nil {
			e.v = v
		}
	})
	return e.v
}
