package authadapters_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpfn/mcpfn/adapters/gcf"
	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// These tests run auth behind each platform adapter: the Authorization
// header must reach core, and core's statuses and challenge headers must
// reach the client unchanged.

func echoBody() string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
}

func mcpHeaders() map[string]string {
	return map[string]string{
		"content-type":         "application/json",
		"accept":               "application/json, text/event-stream",
		"mcp-protocol-version": "2026-07-28",
		"mcp-method":           "tools/call",
		"mcp-name":             "echo",
	}
}

// callEcho calls the echo tool at resource (a 2026-07-28 request, as
// echoBody and mcpHeaders make it), with tok as the bearer token unless it
// is "".
func callEcho(t *testing.T, resource, tok string) *mcptest.Response {
	t.Helper()
	c := &mcptest.Client{URL: resource}
	if tok != "" {
		c.Header = http.Header{"Authorization": {"Bearer " + tok}}
	}
	r, err := c.Call(t.Context(), "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// protected builds a server with the echo tool behind a Resource.
func protected(t *testing.T, as *authtest.Server, o auth.Options) *core.Server {
	t.Helper()
	o.Issuers = []auth.Issuer{{Issuer: as.Issuer}}
	o.Required = []string{"mcp"}
	o.HTTPClient = as.Client()
	rs, err := auth.New(&o)
	if err != nil {
		t.Fatal(err)
	}
	srv := core.NewServer(core.Implementation{Name: "adapters", Version: "1"}, &core.ServerOptions{Authenticator: rs})
	core.AddTool(srv, &core.Tool{Name: "echo", Description: "Echoes the caller."},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			ti := auth.TokenInfoFromContext(ctx)
			if ti == nil || req.Principal == nil || req.Principal.Subject != ti.Subject {
				return "", fmt.Errorf("no caller")
			}
			return "hello " + ti.Subject + " via " + ti.ClientID, nil
		})
	return srv
}

func TestNetHTTPWellKnownOutsidePath(t *testing.T) {
	t.Parallel()
	as := authtest.New(nil)
	defer as.Close()
	var h http.Handler
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	defer ts.Close()
	resource := ts.URL + "/mcp"
	h = nethttp.NewHandler(protected(t, as, auth.Options{Resource: resource}), &nethttp.Options{Path: "/mcp"})

	res, err := http.Get(ts.URL + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), `"resource":"`+resource+`"`) {
		t.Fatalf("metadata through nethttp: %d %s", res.StatusCode, b)
	}
	if res, _ := http.Get(ts.URL + "/elsewhere"); res.StatusCode != http.StatusNotFound {
		t.Fatalf("other paths: %d", res.StatusCode)
	}
	r := callEcho(t, resource, "")
	if r.Status != 401 || !strings.Contains(r.Header.Get("WWW-Authenticate"), ts.URL+"/.well-known/oauth-protected-resource/mcp") {
		t.Fatalf("401: %d %v", r.Status, r.Header)
	}
	r = callEcho(t, resource, as.Mint(authtest.Claims{Audience: []string{resource}, Scope: "mcp"}))
	if r.Status != 200 || !strings.Contains(string(r.Result), "hello user-1") {
		t.Fatalf("200: %d %s", r.Status, r.Messages)
	}
}

// lambdaEvent loads a captured event of adapters/lambda/testdata and makes
// it a request for path with the given headers and body.
func lambdaEvent(t *testing.T, file, method, path, body string, headers map[string][]string) json.RawMessage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "adapters", "lambda", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	single := map[string]any{}
	multi := map[string]any{}
	host := ""
	for k, v := range ev["headers"].(map[string]any) {
		if strings.EqualFold(k, "host") {
			host = v.(string)
		}
	}
	single["host"], multi["host"] = host, []string{host}
	for k, vs := range headers {
		single[k] = strings.Join(vs, ",")
		multi[k] = vs
	}
	ev["body"], ev["isBase64Encoded"] = body, false
	switch {
	case ev["rawPath"] != nil: // Function URL, API Gateway v2
		ev["rawPath"], ev["rawQueryString"], ev["cookies"] = path, "", nil
		hp := ev["requestContext"].(map[string]any)["http"].(map[string]any)
		hp["method"], hp["path"] = method, path
		ev["headers"] = single
		delete(ev, "queryStringParameters")
	case ev["multiValueHeaders"] != nil: // API Gateway v1
		ev["path"], ev["httpMethod"] = path, method
		ev["headers"], ev["multiValueHeaders"] = single, multi
		delete(ev, "queryStringParameters")
		delete(ev, "multiValueQueryStringParameters")
	default: // ALB
		ev["path"], ev["httpMethod"] = path, method
		ev["headers"] = single
		ev["queryStringParameters"] = map[string]any{}
	}
	out, _ := json.Marshal(ev)
	return out
}

// lambdaReply normalises any response of lambda.Wrap.
type lambdaReply struct {
	status int
	header http.Header
	body   string
}

func readLambda(t *testing.T, v any) lambdaReply {
	t.Helper()
	r := lambdaReply{header: http.Header{}}
	if rc, ok := v.(io.ReadCloser); ok { // streaming: prelude, 8 zero bytes, body
		defer rc.Close()
		all, _ := io.ReadAll(rc)
		prelude, body, _ := bytes.Cut(all, make([]byte, 8))
		var p struct {
			StatusCode int
			Headers    map[string]string
		}
		json.Unmarshal(prelude, &p)
		r.status, r.body = p.StatusCode, string(body)
		for k, v := range p.Headers {
			r.header.Add(k, v)
		}
		return r
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		StatusCode        int                 `json:"statusCode"`
		Headers           map[string]string   `json:"headers"`
		MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
		Body              string              `json:"body"`
		IsBase64Encoded   bool                `json:"isBase64Encoded"`
	}
	json.Unmarshal(b, &m)
	r.status, r.body = m.StatusCode, m.Body
	if m.IsBase64Encoded {
		d, _ := base64.StdEncoding.DecodeString(m.Body)
		r.body = string(d)
	}
	for k, v := range m.Headers {
		r.header.Add(k, v)
	}
	for k, vs := range m.MultiValueHeaders {
		if r.header.Get(k) == "" {
			for _, v := range vs {
				r.header.Add(k, v)
			}
		}
	}
	return r
}

func TestLambdaEvents(t *testing.T) {
	t.Parallel()
	as := authtest.New(nil)
	defer as.Close()
	cases := []struct {
		name, file         string
		streaming          bool
		resource, metadata string // metadata: Options.MetadataURL
		path, docPath      string // the MCP path and the document's path as the handler sees them
	}{
		{name: "function URL buffered", file: "function-url-post.json", resource: "https://lambda-url-id.lambda-url.us-west-2.on.aws/mcp",
			path: "/mcp", docPath: "/.well-known/oauth-protected-resource/mcp"},
		{name: "function URL streaming", file: "function-url-post.json", streaming: true, resource: "https://lambda-url-id.lambda-url.us-west-2.on.aws/mcp",
			path: "/mcp", docPath: "/.well-known/oauth-protected-resource/mcp"},
		{name: "API Gateway v1", file: "apigw-v1.json", resource: "https://gy415nuibc.execute-api.us-east-1.amazonaws.com/prod/mcp",
			metadata: "https://gy415nuibc.execute-api.us-east-1.amazonaws.com/prod/.well-known/oauth-protected-resource/prod/mcp",
			path:     "/mcp", docPath: "/.well-known/oauth-protected-resource/prod/mcp"},
		{name: "API Gateway v2 stage prefix", file: "apigw-v2-post.json", resource: "https://r3pmxmplak.execute-api.us-east-2.amazonaws.com/prod/mcp",
			metadata: "https://r3pmxmplak.execute-api.us-east-2.amazonaws.com/prod/.well-known/oauth-protected-resource/mcp",
			path:     "/prod/mcp", docPath: "/prod/.well-known/oauth-protected-resource/mcp"},
		{name: "ALB", file: "alb.json", resource: "https://lambda-test-alb-1334523864.us-east-1.elb.amazonaws.com/mcp",
			path: "/mcp", docPath: "/.well-known/oauth-protected-resource/mcp"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := protected(t, as, auth.Options{Resource: c.resource, MetadataURL: c.metadata})
			fn := lambda.Wrap(srv, &lambda.Options{Streaming: c.streaming})
			invoke := func(ev json.RawMessage) lambdaReply {
				v, err := fn(context.Background(), ev)
				if err != nil {
					t.Fatal(err)
				}
				return readLambda(t, v)
			}
			hdrs := func(auth ...string) map[string][]string {
				h := map[string][]string{}
				for k, v := range mcpHeaders() {
					h[k] = []string{v}
				}
				if len(auth) > 0 {
					h["authorization"] = auth
				}
				return h
			}
			wantMeta := c.metadata
			if wantMeta == "" {
				wantMeta = c.resource[:strings.Index(c.resource[8:], "/")+8] + "/.well-known/oauth-protected-resource/mcp"
			}
			// The document, at the path the handler sees.
			doc := invoke(lambdaEvent(t, c.file, "GET", c.docPath, "", nil))
			if doc.status != 200 || !strings.Contains(doc.body, `"resource":"`+c.resource+`"`) {
				t.Fatalf("metadata: %d %s", doc.status, doc.body)
			}
			// No token: 401 naming the document's public URL.
			r := invoke(lambdaEvent(t, c.file, "POST", c.path, echoBody(), hdrs()))
			if r.status != 401 || !strings.Contains(r.header.Get("WWW-Authenticate"), `resource_metadata="`+wantMeta+`"`) {
				t.Fatalf("401: %d %v %s", r.status, r.header, r.body)
			}
			tok := as.Mint(authtest.Claims{Audience: []string{c.resource}, Scope: "mcp"})
			r = invoke(lambdaEvent(t, c.file, "POST", c.path, echoBody(), hdrs("Bearer "+tok)))
			if r.status != 200 || !strings.Contains(r.body, "hello user-1") {
				t.Fatalf("200: %d %v %s", r.status, r.header, r.body)
			}
			if c.file == "apigw-v1.json" {
				// Multi-value headers: a repeated Authorization is 400.
				r = invoke(lambdaEvent(t, c.file, "POST", c.path, echoBody(), hdrs("Bearer "+tok, "Bearer "+tok)))
				if r.status != 400 || !strings.Contains(r.header.Get("WWW-Authenticate"), `error="invalid_request"`) {
					t.Fatalf("repeated Authorization: %d %v", r.status, r.header)
				}
			}
		})
	}
}

func TestGCF(t *testing.T) {
	t.Parallel()
	as := authtest.New(nil)
	defer as.Close()
	var h http.HandlerFunc
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h(w, r) }))
	defer ts.Close()
	// A gen1 URL: https://REGION-PROJECT.cloudfunctions.net/mcpfn; the
	// platform strips the function's name before the function sees the
	// path, as http.StripPrefix does here.
	resource := ts.URL + "/mcpfn"
	srv := protected(t, as, auth.Options{Resource: resource, MetadataURL: ts.URL + "/mcpfn/.well-known/oauth-protected-resource",
		MetadataPath: "/.well-known/oauth-protected-resource"})
	h = http.StripPrefix("/mcpfn", http.HandlerFunc(gcf.Handler(srv))).ServeHTTP
	res, err := http.Get(ts.URL + "/mcpfn/.well-known/oauth-protected-resource")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), resource) {
		t.Fatalf("metadata: %d %s", res.StatusCode, b)
	}
	r := callEcho(t, resource, "")
	if r.Status != 401 || !strings.Contains(r.Header.Get("WWW-Authenticate"), ts.URL+"/mcpfn/.well-known/oauth-protected-resource") {
		t.Fatalf("401: %d %v", r.Status, r.Header)
	}
	r = callEcho(t, resource, as.Mint(authtest.Claims{Audience: []string{resource}, Scope: "mcp"}))
	if r.Status != 200 || !strings.Contains(string(r.Result), "hello user-1") {
		t.Fatalf("200: %d %s", r.Status, r.Messages)
	}
	_ = events.APIGatewayProxyResponse{}
}
