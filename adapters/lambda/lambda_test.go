package lambda_test

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpfn/mcpfn/adapters/lambda"
)

var (
	//go:embed testdata/apigw-v1.json
	apigwV1 []byte
	//go:embed testdata/apigw-v1-binary.json
	apigwV1Binary []byte
	//go:embed testdata/apigw-v2-get.json
	apigwV2Get []byte
	//go:embed testdata/apigw-v2-post.json
	apigwV2Post []byte
	//go:embed testdata/function-url-post.json
	urlPost []byte
	//go:embed testdata/function-url-base64.json
	urlBase64 []byte
	//go:embed testdata/function-url-get.json
	urlGet []byte
	//go:embed testdata/alb.json
	albSingle []byte
	//go:embed testdata/alb-multivalue.json
	albMulti []byte
	//go:embed testdata/alb-post-base64.json
	albPostBase64 []byte

	//go:embed testdata/not-json.txt
	notJSON []byte
	//go:embed testdata/unknown-sqs.json
	unknownSQS []byte
	//go:embed testdata/function-url-bad-base64.json
	urlBadBase64 []byte
	//go:embed testdata/function-url-no-method.json
	urlNoMethod []byte
	//go:embed testdata/apigw-v1-no-method.json
	apigwV1NoMethod []byte
	//go:embed testdata/apigw-v2-bad-method.json
	apigwV2BadMethod []byte
	//go:embed testdata/alb-bad-shape.json
	albBadShape []byte
)

var binaryBody = []byte{0, 1, 2, 3, 0xfe, 0xfd, 0xfc, 0xff, 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}

// response is any response Wrap returns, normalised.
type response struct {
	Type        string // Go type of the response
	Status      int
	Description string // ALB
	Headers     map[string]string
	Multi       map[string][]string
	Cookies     []string
	Body        string // decoded
	Base64      bool
}

// readResponse normalises v, reading a streaming response to the end.
func readResponse(t *testing.T, v any) response {
	t.Helper()
	r := response{Type: fmt.Sprintf("%T", v)}
	decode := func(body string, b64 bool) string {
		if !b64 {
			return body
		}
		b, err := base64.StdEncoding.DecodeString(body)
		if err != nil {
			t.Fatalf("response body is not base64: %v", err)
		}
		return string(b)
	}
	switch v := v.(type) {
	case events.APIGatewayProxyResponse:
		r.Status, r.Headers, r.Multi, r.Base64 = v.StatusCode, v.Headers, v.MultiValueHeaders, v.IsBase64Encoded
		r.Body = decode(v.Body, v.IsBase64Encoded)
	case events.APIGatewayV2HTTPResponse:
		r.Status, r.Headers, r.Multi, r.Cookies, r.Base64 = v.StatusCode, v.Headers, v.MultiValueHeaders, v.Cookies, v.IsBase64Encoded
		r.Body = decode(v.Body, v.IsBase64Encoded)
	case events.LambdaFunctionURLResponse:
		r.Status, r.Headers, r.Cookies, r.Base64 = v.StatusCode, v.Headers, v.Cookies, v.IsBase64Encoded
		r.Body = decode(v.Body, v.IsBase64Encoded)
	case events.ALBTargetGroupResponse:
		r.Status, r.Description, r.Headers, r.Multi, r.Base64 = v.StatusCode, v.StatusDescription, v.Headers, v.MultiValueHeaders, v.IsBase64Encoded
		r.Body = decode(v.Body, v.IsBase64Encoded)
	case io.ReadCloser: // the streaming responses
		defer v.Close()
		all, err := io.ReadAll(v)
		if err != nil {
			t.Fatalf("reading streaming response: %v", err)
		}
		prelude, body, ok := bytes.Cut(all, make([]byte, 8))
		if !ok {
			t.Fatalf("streaming response has no prelude: %q", all)
		}
		var p struct {
			StatusCode        int
			Headers           map[string]string
			MultiValueHeaders map[string][]string
			Cookies           []string
		}
		if err := json.Unmarshal(prelude, &p); err != nil {
			t.Fatalf("bad prelude %q: %v", prelude, err)
		}
		r.Status, r.Headers, r.Multi, r.Cookies, r.Body = p.StatusCode, p.Headers, p.MultiValueHeaders, p.Cookies, string(body)
	default:
		t.Fatalf("unexpected response type %T", v)
	}
	// The JSON round trip is what Lambda sees: check it works.
	if _, ok := v.(io.Reader); !ok {
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("response does not marshal: %v", err)
		}
	}
	return r
}

// seen is what a handler saw of its request.
type seen struct {
	Method, URI, Host, RemoteAddr, Proto string
	Header                               http.Header
	Body                                 string
	ContentLength                        int64
}

func record(r *http.Request) seen {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return seen{
		Method: r.Method, URI: r.URL.String(), Host: r.Host, RemoteAddr: r.RemoteAddr, Proto: r.Proto,
		Header: r.Header, Body: string(b), ContentLength: r.ContentLength,
	}
}

func TestWrap(t *testing.T) {
	t.Parallel()
	streaming := &lambda.Options{Streaming: true}
	hello := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		http.SetCookie(w, &http.Cookie{Name: "yummy", Value: "cookie"})
		http.SetCookie(w, &http.Cookie{Name: "fruit", Value: "banana", Expires: time.Date(2000, time.January, 0, 0, 0, 0, 0, time.UTC)})
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"ok":true}`)
	}
	echoBinary := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		io.Copy(w, r.Body)
	}
	sse := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		for i := range 3 {
			fmt.Fprintf(w, "id: %d\nevent: message\ndata: {\"n\":%d}\n\n", i, i)
			w.(http.Flusher).Flush()
		}
	}
	const sseBody = "id: 0\nevent: message\ndata: {\"n\":0}\n\n" +
		"id: 1\nevent: message\ndata: {\"n\":1}\n\n" +
		"id: 2\nevent: message\ndata: {\"n\":2}\n\n"
	jsonHeaders := map[string]string{"Content-Type": "application/json", "X-Multi": "a,b"}
	helloCookies := []string{"yummy=cookie", "fruit=banana; Expires=Fri, 31 Dec 1999 00:00:00 GMT"}
	plain400 := func(typ string) response {
		return response{Type: typ, Status: 400, Headers: map[string]string{"Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff"}}
	}

	for name, tc := range map[string]struct {
		event    []byte
		opts     *lambda.Options
		handler  http.HandlerFunc
		wantReq  *seen // nil: the handler must not run
		want     response
		wantBody string // checked if want.Body is empty and this is set
	}{
		"apigw-v1/post": {
			event:   apigwV1,
			handler: hello,
			wantReq: &seen{
				Method: "POST", URI: "/hello/world?name=me", Host: "gy415nuibc.execute-api.us-east-1.amazonaws.com",
				RemoteAddr: "192.168.196.186:0", Proto: "HTTP/1.1", Body: "{\r\n\t\"a\": 1\r\n}", ContentLength: 13,
				Header: http.Header{"Accept": {"*/*"}, "Cache-Control": {"no-cache"}, "Headername": {"headerValue"}, "Content-Type": {"application/json"}},
			},
			want: response{
				Type: "events.APIGatewayProxyResponse", Status: 201, Body: `{"ok":true}`,
				Multi: map[string][]string{"Content-Type": {"application/json"}, "X-Multi": {"a", "b"}, "Set-Cookie": helloCookies},
			},
		},
		"apigw-v1/binary-multivalue": {
			event:   apigwV1Binary,
			handler: echoBinary,
			wantReq: &seen{
				Method: "PUT", URI: "/files/upload?tag=a&tag=b+c&x=%26%3D", Host: "gy415nuibc.execute-api.us-east-1.amazonaws.com",
				RemoteAddr: "54.182.214.83:0", Proto: "HTTP/1.1", Body: string(binaryBody), ContentLength: 16,
				Header: http.Header{"X-Multi": {"one", "two"}, "Cookie": {"a=1; b=2"}, "Content-Type": {"application/octet-stream"}},
			},
			want: response{
				Type: "events.APIGatewayProxyResponse", Status: 200, Body: string(binaryBody), Base64: true,
				Multi: map[string][]string{"Content-Type": {"application/octet-stream"}},
			},
		},
		"apigw-v2/get": {
			event: apigwV2Get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, "<html><body>hi</body></html>") // sniffed
			},
			wantReq: &seen{
				Method: "GET", URI: "/", Host: "aaaaaaaaaa.execute-api.us-west-2.amazonaws.com",
				RemoteAddr: "1.2.3.4:0", Proto: "HTTP/1.1",
				Header: http.Header{"Content-Length": {"0"}, "X-Forwarded-Proto": {"https"}},
			},
			want: response{
				Type: "events.APIGatewayV2HTTPResponse", Status: 200, Body: "<html><body>hi</body></html>",
				Headers: map[string]string{"Content-Type": "text/html; charset=utf-8"},
			},
		},
		"apigw-v2/post-cookies": {
			event:   apigwV2Post,
			handler: hello,
			wantReq: &seen{
				Method: "POST", URI: "/prod/mcp/a%2Fb?q=hello%20world&q=2&empty=", Host: "r3pmxmplak.execute-api.us-east-2.amazonaws.com",
				RemoteAddr: "205.255.255.176:0", Proto: "HTTP/1.1",
				Body:          "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{}}\n",
				ContentLength: 53,
				Header: http.Header{
					"Cookie": {"session=abc; theme=dark"}, "X-Multi": {"one,two"},
					"Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2025-06-18"},
				},
			},
			want: response{
				Type: "events.APIGatewayV2HTTPResponse", Status: 201, Body: `{"ok":true}`,
				Headers: jsonHeaders, Cookies: helloCookies,
			},
		},
		"apigw-v2/streaming-falls-back-to-buffered": {
			event: apigwV2Post, opts: streaming, handler: sse,
			wantReq: &seen{Method: "POST", URI: "/prod/mcp/a%2Fb?q=hello%20world&q=2&empty="},
			want: response{
				Type: "events.APIGatewayV2HTTPResponse", Status: 200, Body: sseBody,
				Headers: map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache"},
			},
		},
		"url/post-cookies": {
			event:   urlPost,
			handler: hello,
			wantReq: &seen{
				Method: "POST", URI: "/hello?hello=world&foo=bar", Host: "lambda-url-id.lambda-url.us-west-2.on.aws",
				RemoteAddr: "127.0.0.1:0", Proto: "HTTP/1.1", Body: `{"hello": "world"}`, ContentLength: 18,
				// The captured event has both the cookie header and the
				// cookies list: the header is used as is.
				Header: http.Header{"Cookie": {"foo=bar; hello=hello"}, "Header2": {"h1,h2"}},
			},
			want: response{
				Type: "events.LambdaFunctionURLResponse", Status: 201, Body: `{"ok":true}`,
				Headers: jsonHeaders, Cookies: helloCookies,
			},
		},
		"url/base64-body": {
			event: urlBase64,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/xml")
				io.Copy(w, r.Body)
			},
			wantReq: &seen{Method: "POST", URI: "/", Body: "<idk/>", ContentLength: 6, Header: http.Header{"Content-Type": {"idk"}}},
			want: response{
				Type: "events.LambdaFunctionURLResponse", Status: 200, Body: "<idk/>",
				Headers: map[string]string{"Content-Type": "text/xml"},
			},
		},
		"url/binary-response": {
			event: urlGet,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Write(binaryBody) // sniffed as application/octet-stream
			},
			wantReq: &seen{Method: "GET", URI: "/"},
			want: response{
				Type: "events.LambdaFunctionURLResponse", Status: 200, Body: string(binaryBody), Base64: true,
				Headers: map[string]string{"Content-Type": "application/octet-stream"},
			},
		},
		"url/invalid-utf8-text-is-base64": {
			event: urlGet,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				w.Write([]byte("caf\xe9"))
			},
			wantReq: &seen{Method: "GET", URI: "/"},
			want: response{
				Type: "events.LambdaFunctionURLResponse", Status: 200, Body: "caf\xe9", Base64: true,
				Headers: map[string]string{"Content-Type": "text/plain"},
			},
		},
		"url/sse-buffered": {
			event: urlGet, handler: sse,
			wantReq: &seen{Method: "GET", URI: "/"},
			want: response{
				Type: "events.LambdaFunctionURLResponse", Status: 200, Body: sseBody,
				Headers: map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache"},
			},
		},
		"url/sse-streaming": {
			event: urlGet, opts: streaming, handler: sse,
			wantReq: &seen{Method: "GET", URI: "/"},
			want: response{
				Type: "*events.LambdaFunctionURLStreamingResponse", Status: 200, Body: sseBody,
				Headers: map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache"},
			},
		},
		"url/streaming-cookies": {
			event: urlPost, opts: streaming, handler: hello,
			wantReq: &seen{Method: "POST", URI: "/hello?hello=world&foo=bar"},
			want: response{
				Type: "*events.LambdaFunctionURLStreamingResponse", Status: 201, Body: `{"ok":true}`,
				Headers: jsonHeaders, Cookies: helloCookies,
			},
		},
		"url/streaming-empty-handler": {
			event: urlGet, opts: streaming, handler: func(http.ResponseWriter, *http.Request) {},
			wantReq: &seen{Method: "GET", URI: "/"},
			want:    response{Type: "*events.LambdaFunctionURLStreamingResponse", Status: 200},
		},
		"url/streaming-status-only": {
			event: urlGet, opts: streaming,
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) },
			wantReq: &seen{Method: "GET", URI: "/"},
			want:    response{Type: "*events.LambdaFunctionURLStreamingResponse", Status: 202},
		},
		"apigw-v1/sse-streaming": {
			event: apigwV1, opts: streaming, handler: sse,
			wantReq: &seen{Method: "POST", URI: "/hello/world?name=me"},
			want: response{
				Type: "*events.APIGatewayProxyStreamingResponse", Status: 200, Body: sseBody,
				Multi: map[string][]string{"Content-Type": {"text/event-stream"}, "Cache-Control": {"no-cache"}},
			},
		},
		"apigw-v1/streaming-binary": {
			event: apigwV1Binary, opts: streaming, handler: echoBinary,
			wantReq: &seen{Method: "PUT", Body: string(binaryBody)},
			want: response{
				Type: "*events.APIGatewayProxyStreamingResponse", Status: 200, Body: string(binaryBody),
				Multi: map[string][]string{"Content-Type": {"application/octet-stream"}},
			},
		},
		"alb/single-value": {
			event:   albSingle,
			handler: hello,
			wantReq: &seen{
				Method: "GET", URI: "/?key=hello", Host: "lambda-test-alb-1334523864.us-east-1.elb.amazonaws.com",
				RemoteAddr: "25.12.198.67:0", Proto: "HTTP/1.1", Header: http.Header{"X-Myheader": {"123"}},
			},
			want: response{
				Type: "events.ALBTargetGroupResponse", Status: 201, Description: "201 Created", Body: `{"ok":true}`,
				Headers: map[string]string{
					"Content-Type": "application/json", "X-Multi": "a,b",
					"Set-Cookie": strings.Join(helloCookies, ","),
				},
			},
		},
		"alb/multi-value": {
			event:   albMulti,
			handler: hello,
			wantReq: &seen{
				Method: "GET", URI: "/?key=hello", Host: "lambda-test-alb-1234567.us-east-1.elb.amazonaws.com",
				RemoteAddr: "72.21.198.67:0", Header: http.Header{"X-Myheader": {"123"}},
			},
			want: response{
				Type: "events.ALBTargetGroupResponse", Status: 201, Description: "201 Created", Body: `{"ok":true}`,
				Multi: map[string][]string{"Content-Type": {"application/json"}, "X-Multi": {"a", "b"}, "Set-Cookie": helloCookies},
			},
		},
		"alb/base64-raw-query": {
			event:   albPostBase64,
			handler: echoBinary,
			wantReq: &seen{
				Method: "POST", URI: "/mcp/caf%C3%A9?lang=fr&q=a%20b", RemoteAddr: "25.12.198.67:0",
				Body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, ContentLength: 40,
			},
			want: response{
				Type: "events.ALBTargetGroupResponse", Status: 200, Description: "200 OK",
				Body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, Base64: true,
				Headers: map[string]string{"Content-Type": "application/octet-stream"},
			},
		},
		"head-discards-body": {
			event: func() []byte {
				return bytes.Replace(urlGet, []byte(`"method": "GET"`), []byte(`"method": "HEAD"`), 1)
			}(),
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				io.WriteString(w, "body")
			},
			wantReq: &seen{Method: "HEAD"},
			want: response{
				Type: "events.LambdaFunctionURLResponse", Status: 200,
				Headers: map[string]string{"Content-Type": "text/plain"},
			},
		},
		"headers-frozen-after-write": {
			event: urlGet,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Before", "1")
				w.WriteHeader(http.StatusTeapot)
				w.Header().Set("X-After", "1")
				w.Header().Set("Trailer:X-T", "1")
			},
			wantReq: &seen{Method: "GET"},
			want: response{
				Type: "events.LambdaFunctionURLResponse", Status: 418,
				Headers: map[string]string{"X-Before": "1"},
			},
		},
		"panic/buffered": {
			event:   apigwV1,
			handler: func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "partial"); panic("boom") },
			wantReq: &seen{Method: "POST"},
			want: response{
				Type: "events.APIGatewayProxyResponse", Status: 500, Body: "Internal Server Error\n",
				Multi: map[string][]string{"Content-Type": {"text/plain; charset=utf-8"}, "X-Content-Type-Options": {"nosniff"}},
			},
		},
		"panic/streaming-before-release": {
			event: urlGet, opts: streaming,
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200); panic(http.ErrAbortHandler) },
			wantReq: &seen{Method: "GET"},
			want: response{
				Type: "*events.LambdaFunctionURLStreamingResponse", Status: 500, Body: "Internal Server Error\n",
				Headers: map[string]string{"Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff"},
			},
		},
		"malformed/not-json":          {event: notJSON, want: plain400("events.APIGatewayProxyResponse")},
		"malformed/not-json-stream":   {event: notJSON, opts: streaming, want: plain400("*events.LambdaFunctionURLStreamingResponse")},
		"malformed/unknown-event":     {event: unknownSQS, want: plain400("events.APIGatewayProxyResponse")},
		"malformed/empty-object":      {event: []byte(`{}`), want: plain400("events.APIGatewayProxyResponse")},
		"malformed/null":              {event: []byte(`null`), want: plain400("events.APIGatewayProxyResponse")},
		"malformed/bad-base64":        {event: urlBadBase64, want: plain400("events.LambdaFunctionURLResponse")},
		"malformed/bad-base64-stream": {event: urlBadBase64, opts: streaming, want: plain400("*events.LambdaFunctionURLStreamingResponse")},
		"malformed/url-no-method":     {event: urlNoMethod, want: plain400("events.LambdaFunctionURLResponse")},
		"malformed/v2-bad-method":     {event: apigwV2BadMethod, want: plain400("events.APIGatewayV2HTTPResponse")},
		"malformed/alb-bad-shape":     {event: albBadShape, want: plain400("events.APIGatewayProxyResponse")},
		"malformed/v1-no-method": {
			event: apigwV1NoMethod,
			want: response{Type: "events.APIGatewayProxyResponse", Status: 400, Multi: map[string][]string{
				"Content-Type": {"text/plain; charset=utf-8"}, "X-Content-Type-Options": {"nosniff"},
			}},
		},
		"malformed/v1-no-method-stream": {
			event: apigwV1NoMethod, opts: streaming,
			want: response{Type: "*events.APIGatewayProxyStreamingResponse", Status: 400, Multi: map[string][]string{
				"Content-Type": {"text/plain; charset=utf-8"}, "X-Content-Type-Options": {"nosniff"},
			}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var got *seen
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				s := record(r)
				got = &s
				if tc.handler != nil {
					tc.handler(w, r)
				}
			})
			res, err := lambda.Wrap(h, tc.opts)(context.Background(), tc.event)
			if err != nil {
				t.Fatalf("Wrap returned error %v", err)
			}
			r := readResponse(t, res) // waits for a streaming handler to return
			if tc.wantReq == nil {
				if got != nil {
					t.Fatalf("handler ran for a malformed event: %+v", got)
				}
				if !strings.HasPrefix(r.Body, "lambda: ") {
					t.Errorf("400 body = %q, want a reason", r.Body)
				}
				r.Body = ""
			} else {
				if got == nil {
					t.Fatal("handler did not run")
				}
				checkSeen(t, *got, *tc.wantReq)
			}
			if !reflect.DeepEqual(r, tc.want) {
				t.Errorf("response\n got %+v\nwant %+v", r, tc.want)
			}
		})
	}
}

// checkSeen compares the non-zero fields of want, and the headers it lists.
func checkSeen(t *testing.T, got, want seen) {
	t.Helper()
	for _, f := range []struct{ name, got, want string }{
		{"Method", got.Method, want.Method}, {"URL", got.URI, want.URI}, {"Host", got.Host, want.Host},
		{"RemoteAddr", got.RemoteAddr, want.RemoteAddr}, {"Proto", got.Proto, want.Proto}, {"Body", got.Body, want.Body},
	} {
		if f.want != "" && f.got != f.want {
			t.Errorf("request %s = %q, want %q", f.name, f.got, f.want)
		}
	}
	if want.ContentLength != 0 && got.ContentLength != want.ContentLength {
		t.Errorf("request ContentLength = %d, want %d", got.ContentLength, want.ContentLength)
	}
	if got.Body == "" && got.ContentLength != 0 {
		t.Errorf("empty body with ContentLength %d", got.ContentLength)
	}
	for k, vs := range want.Header {
		if !reflect.DeepEqual(got.Header[k], vs) {
			t.Errorf("request header %s = %q, want %q", k, got.Header[k], vs)
		}
	}
	if _, ok := got.Header["Host"]; ok {
		t.Errorf("Host left in the header map")
	}
}

func TestRequestFromContext(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		event []byte
		check func(t *testing.T, ev any)
	}{
		"apigw-v1": {apigwV1, func(t *testing.T, ev any) {
			if e, ok := ev.(*events.APIGatewayProxyRequest); !ok || e.RequestContext.Stage != "testStage" {
				t.Errorf("got %T %+v", ev, ev)
			}
		}},
		"apigw-v2": {apigwV2Post, func(t *testing.T, ev any) {
			if e, ok := ev.(*events.APIGatewayV2HTTPRequest); !ok || e.RequestContext.Stage != "prod" {
				t.Errorf("got %T %+v", ev, ev)
			}
		}},
		"function-url": {urlPost, func(t *testing.T, ev any) {
			if e, ok := ev.(*events.LambdaFunctionURLRequest); !ok || e.RequestContext.APIID != "lambda-url-id" {
				t.Errorf("got %T %+v", ev, ev)
			}
		}},
		"alb": {albMulti, func(t *testing.T, ev any) {
			if e, ok := ev.(*events.ALBTargetGroupRequest); !ok || e.MultiValueHeaders["x-myheader"][0] != "123" {
				t.Errorf("got %T %+v", ev, ev)
			}
		}},
	} {
		for _, opts := range []*lambda.Options{nil, {Streaming: true}} {
			t.Run(fmt.Sprintf("%s/streaming=%v", name, opts != nil), func(t *testing.T) {
				t.Parallel()
				deadline := time.Now().Add(time.Minute).Truncate(time.Millisecond)
				ctx, cancel := context.WithDeadline(context.Background(), deadline)
				defer cancel()
				ran := false
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					ran = true
					if d, ok := r.Context().Deadline(); !ok || !d.Equal(deadline) {
						t.Errorf("request deadline = %v, %v; want %v", d, ok, deadline)
					}
					ev, ok := lambda.RequestFromContext(r.Context())
					if !ok {
						t.Fatal("no event in the request context")
					}
					tc.check(t, ev)
					if again, _ := lambda.RequestFromContext(r.Context()); again != ev {
						t.Error("event decoded twice")
					}
				})
				res, _ := lambda.Wrap(h, opts)(ctx, tc.event)
				readResponse(t, res)
				if !ran {
					t.Fatal("handler did not run")
				}
			})
		}
	}
	if _, ok := lambda.RequestFromContext(context.Background()); ok {
		t.Error("RequestFromContext found an event in an empty context")
	}
	ev := &events.ALBTargetGroupRequest{Path: "/x"}
	if got, ok := lambda.RequestFromContext(lambda.NewContext(context.Background(), ev)); !ok || got != ev {
		t.Errorf("NewContext/RequestFromContext: got %v, %v", got, ok)
	}
}

// TestStreamingFlush checks that a flushed event can be read from the
// response body while the handler is still running.
func TestStreamingFlush(t *testing.T) {
	t.Parallel()
	for name, event := range map[string][]byte{"function-url": urlPost, "apigw-v1": apigwV1} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			finished := make(chan struct{})
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer close(finished)
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "event: message\ndata: first\n\n")
				w.(http.Flusher).Flush()
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
				io.WriteString(w, "event: message\ndata: second\n\n")
			})
			res, err := lambda.Wrap(h, &lambda.Options{Streaming: true})(context.Background(), event)
			if err != nil {
				t.Fatal(err)
			}
			body := res.(io.ReadCloser)
			defer body.Close()

			// The prelude, then the first event, must arrive before the
			// handler is released.
			got := make([]byte, 0, 512)
			buf := make([]byte, 512)
			deadline := time.AfterFunc(10*time.Second, func() { body.Close() })
			defer deadline.Stop()
			for !bytes.HasSuffix(got, []byte("data: first\n\n")) {
				n, err := body.Read(buf)
				got = append(got, buf[:n]...)
				if err != nil {
					t.Fatalf("read %q, then %v", got, err)
				}
			}
			select {
			case <-finished:
				t.Fatal("handler finished before it was released")
			default:
			}
			prelude, first, ok := bytes.Cut(got, make([]byte, 8))
			if !ok || !bytes.Contains(prelude, []byte(`"statusCode":200`)) || !bytes.Contains(prelude, []byte("text/event-stream")) {
				t.Fatalf("prelude = %q", prelude)
			}
			if string(first) != "event: message\ndata: first\n\n" {
				t.Fatalf("first event = %q", first)
			}
			close(release)
			rest, err := io.ReadAll(body)
			if err != nil || string(rest) != "event: message\ndata: second\n\n" {
				t.Fatalf("rest = %q, %v", rest, err)
			}
			<-finished
		})
	}
}

// TestStreamingClose checks that closing a streaming response ends the
// handler's context and waits for the handler to return.
func TestStreamingClose(t *testing.T) {
	t.Parallel()
	// In a synctest bubble the handler's pause after the end of its context
	// is fake time: Close returning before the handler would find done unset,
	// deterministically.
	synctest.Test(t, func(t *testing.T) {
		done := false
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			time.Sleep(10 * time.Millisecond)
			if _, err := io.WriteString(w, "late"); err == nil {
				err = w.(interface{ FlushError() error }).FlushError()
				if err == nil {
					t.Error("flush after Close succeeded")
				}
			}
			done = true
		})
		res, _ := lambda.Wrap(h, &lambda.Options{Streaming: true})(context.Background(), urlGet)
		if err := res.(io.Closer).Close(); err != nil {
			t.Fatal(err)
		}
		if !done { // Close waited for the handler
			t.Fatal("Close returned before the handler")
		}
	})
}

// TestStreamingPanicAfterRelease checks that a panic after the response has
// started ends the stream with an error, which the Lambda runtime client
// reports as a function error.
func TestStreamingPanicAfterRelease(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: partial\n\n")
		w.(http.Flusher).Flush()
		panic("boom")
	})
	res, _ := lambda.Wrap(h, &lambda.Options{Streaming: true})(context.Background(), urlGet)
	body := res.(io.ReadCloser)
	defer body.Close()
	all, err := io.ReadAll(body)
	if err == nil || !strings.Contains(err.Error(), "handler failed") {
		t.Fatalf("read error = %v, want the handler failure", err)
	}
	if !bytes.HasSuffix(all, []byte("data: partial\n\n")) {
		t.Fatalf("body = %q", all)
	}
}

func TestWrapConcurrent(t *testing.T) {
	t.Parallel()
	for _, opts := range []*lambda.Options{nil, {Streaming: true}} {
		fn := lambda.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.Copy(w, r.Body)
		}), opts)
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				res, err := fn(context.Background(), urlPost)
				if err != nil {
					t.Error(err)
					return
				}
				if r := readResponse(t, res); r.Body != `{"hello": "world"}` {
					t.Errorf("body = %q", r.Body)
				}
			})
		}
		wg.Wait()
	}
}

func TestWrapNilHandler(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Wrap(nil) did not panic")
		}
	}()
	lambda.Wrap(nil, nil)
}

func BenchmarkWrap(b *testing.B) {
	event := urlPost // a JSON POST through a Function URL
	fn := lambda.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}), nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fn(ctx, event); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWrapStreaming(b *testing.B) {
	fn := lambda.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
		w.(http.Flusher).Flush()
	}), &lambda.Options{Streaming: true})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := fn(ctx, urlPost)
		if err != nil {
			b.Fatal(err)
		}
		rc := res.(io.ReadCloser)
		io.Copy(io.Discard, rc)
		rc.Close()
	}
}
