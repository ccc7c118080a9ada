// Package adapterbench measures what the platform adapters cost per
// invocation: the same core.Server answers the same 2026-07-28 tools/call
// (the calculator's add) through net/http and through adapters/lambda, in
// process, from the bytes the platform hands over to the bytes it sends
// back.
//
//	go test -run '^$' -bench ToolsCall ./test/adapterbench      # the Go benchmark
//	go run ./test/adapterbench/cmd/measure                     # it, with ratios, cold start and zip sizes
//
// The cases (Cases):
//
//	nethttp               nethttp.Handler on an httptest request and recorder: the
//	                      core's own cost, with no transport (the baseline)
//	nethttp-tcp           a real http.Server on loopback, one keep-alive connection:
//	                      what net/http adds (parsing, writing, the TCP round trip)
//	lambda-url-buffered   lambda.Wrap on a Function URL event; the response as JSON,
//	                      as aws-lambda-go marshals it for the Runtime API
//	lambda-url-streaming  the same with Options.Streaming: the prelude and body read
//	                      to the end, as aws-lambda-go streams them
//	apigw-v1              lambda.Wrap on a REST API (payload 1.0) event, buffered
//
// The Runtime API's own HTTP exchange (next, response) is not included: it
// happens in every Lambda function, whatever the adapter.
package adapterbench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/core"
)

// AddArgs are the arguments of the add tool.
type AddArgs struct {
	Left  int `json:"left" jsonschema:"description=The first addend"`
	Right int `json:"right" jsonschema:"description=The second addend"`
}

// NewServer returns the calculator.
func NewServer() *core.Server {
	srv := core.NewServer(core.Implementation{Name: "calculator", Version: "2.0.0"}, nil)
	core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two numbers."},
		func(ctx context.Context, req *core.CallToolRequest, in AddArgs) (int, error) {
			return in.Left + in.Right, nil
		})
	return srv
}

// Body is the JSON-RPC request every case sends.
const Body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"left":2,"right":3},` +
	`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

// Answered reports whether out, what a case sent back, holds the answer
// (in a buffered Lambda response, as a JSON string).
func Answered(out []byte) bool {
	return bytes.Contains(out, []byte(`"structuredContent":5`)) || bytes.Contains(out, []byte(`\"structuredContent\":5`))
}

// Header holds the request's HTTP headers.
var Header = map[string]string{
	"Content-Type":         "application/json",
	"Accept":               "application/json, text/event-stream",
	"Mcp-Protocol-Version": "2026-07-28",
	"Mcp-Method":           "tools/call",
	"Mcp-Name":             "add",
	"User-Agent":           "adapterbench",
}

// FunctionURLEvent returns the Function URL event of the request.
func FunctionURLEvent() []byte {
	h := map[string]string{"host": "abcdefghij.lambda-url.us-east-1.on.aws", "x-forwarded-proto": "https",
		"x-forwarded-for": "203.0.113.7", "x-forwarded-port": "443"}
	for k, v := range Header {
		h[strings.ToLower(k)] = v
	}
	ev := events.LambdaFunctionURLRequest{
		Version: "2.0", RawPath: "/mcp", Headers: h, Body: Body,
		RequestContext: events.LambdaFunctionURLRequestContext{
			AccountID: "123456789012", RequestID: "5f1d8a3c-0000-4000-8000-000000000001",
			DomainName: "abcdefghij.lambda-url.us-east-1.on.aws", DomainPrefix: "abcdefghij",
			APIID: "abcdefghij", Time: "30/Nov/2026:00:00:00 +0000", TimeEpoch: 1795996800000,
			HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{
				Method: "POST", Path: "/mcp", Protocol: "HTTP/1.1", SourceIP: "203.0.113.7", UserAgent: "adapterbench",
			},
		},
	}
	b, _ := json.Marshal(ev)
	return b
}

// RESTEvent returns the REST API (payload 1.0) event of the request.
func RESTEvent() []byte {
	h := map[string]string{"Host": "abcdefghij.execute-api.us-east-1.amazonaws.com", "X-Forwarded-Proto": "https",
		"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Port": "443"}
	mh := map[string][]string{}
	for k, v := range Header {
		h[k] = v
	}
	for k, v := range h {
		mh[k] = []string{v}
	}
	ev := events.APIGatewayProxyRequest{
		Resource: "/{proxy+}", Path: "/mcp", HTTPMethod: "POST", Headers: h, MultiValueHeaders: mh,
		PathParameters: map[string]string{"proxy": "mcp"}, Body: Body,
		RequestContext: events.APIGatewayProxyRequestContext{
			AccountID: "123456789012", ResourceID: "abc123", Stage: "prod", RequestID: "5f1d8a3c-0000-4000-8000-000000000002",
			DomainName: "abcdefghij.execute-api.us-east-1.amazonaws.com", Protocol: "HTTP/1.1",
			Identity:     events.APIGatewayRequestIdentity{SourceIP: "203.0.113.7", UserAgent: "adapterbench"},
			ResourcePath: "/{proxy+}", HTTPMethod: "POST", APIID: "abcdefghij",
		},
	}
	b, _ := json.Marshal(ev)
	return b
}

// Case is one way of serving the request.
type Case struct {
	Name string
	// Setup returns the function that serves one request and returns the
	// bytes sent back, and a function that releases what Setup started.
	Setup func(srv *core.Server) (serve func() ([]byte, error), done func())
}

// Cases are the benchmark's cases, the baseline first.
var Cases = []Case{
	{"nethttp", func(srv *core.Server) (func() ([]byte, error), func()) {
		h := nethttp.Handler(srv)
		return func() ([]byte, error) {
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(Body))
			for k, v := range Header {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			return w.Body.Bytes(), nil
		}, func() {}
	}},
	{"nethttp-tcp", setupTCP},
	{"lambda-url-buffered", lambdaCase(FunctionURLEvent, false)},
	{"lambda-url-streaming", lambdaCase(FunctionURLEvent, true)},
	{"apigw-v1", lambdaCase(RESTEvent, false)},
}

// lambdaCase invokes lambda.Wrap with the event, and serializes the
// response as aws-lambda-go's runtime loop does before posting it.
func lambdaCase(event func() []byte, streaming bool) func(*core.Server) (func() ([]byte, error), func()) {
	return func(srv *core.Server) (func() ([]byte, error), func()) {
		fn := lambda.Wrap(srv, &lambda.Options{Streaming: streaming})
		ev := json.RawMessage(event())
		ctx := context.Background()
		return func() ([]byte, error) {
			res, err := fn(ctx, ev)
			if err != nil {
				return nil, err
			}
			if r, ok := res.(io.ReadCloser); ok {
				defer r.Close()
				return io.ReadAll(r)
			}
			return json.Marshal(res)
		}, func() {}
	}
}

// setupTCP serves srv on a loopback http.Server and sends the request on
// one keep-alive connection, reading the answer with http.ReadResponse.
func setupTCP(srv *core.Server) (func() ([]byte, error), func()) {
	hs := httptest.NewServer(nethttp.Handler(srv))
	var req bytes.Buffer
	fmt.Fprintf(&req, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", strings.TrimPrefix(hs.URL, "http://"), len(Body))
	for k, v := range Header {
		fmt.Fprintf(&req, "%s: %s\r\n", k, v)
	}
	req.WriteString("\r\n" + Body)
	raw := req.Bytes()
	var conn net.Conn
	var br *bufio.Reader
	return func() ([]byte, error) {
			if conn == nil {
				c, err := net.DialTimeout("tcp", strings.TrimPrefix(hs.URL, "http://"), 5*time.Second)
				if err != nil {
					return nil, err
				}
				conn, br = c, bufio.NewReader(c)
			}
			if _, err := conn.Write(raw); err != nil {
				return nil, err
			}
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				return nil, err
			}
			defer res.Body.Close()
			return io.ReadAll(res.Body)
		}, func() {
			if conn != nil {
				conn.Close()
			}
			hs.Close()
		}
}

// Run runs c as a benchmark body, checking the first answer.
func Run(b *testing.B, c Case) {
	serve, done := c.Setup(NewServer())
	defer done()
	out, err := serve()
	if err != nil || !Answered(out) {
		b.Fatalf("%s: %v, answer %q", c.Name, err, out)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := serve(); err != nil {
			b.Fatal(err)
		}
	}
}
