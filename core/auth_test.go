package core_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

// recordingAuth is a core.Authenticator for testing core's seam: a request
// is authenticated by "Authorization: Token <subject>", and an operation is
// refused when its method or name is listed in deny. It records the calls.
type recordingAuth struct {
	mu     sync.Mutex
	events []string
	ops    []core.Operation
	deny   map[string]bool
}

func (a *recordingAuth) log(s string) {
	a.mu.Lock()
	a.events = append(a.events, s)
	a.mu.Unlock()
}

func (a *recordingAuth) Metadata(r *http.Request) ([]byte, error) {
	if r.URL.Path != "/.well-known/test-metadata" {
		return nil, nil
	}
	a.log("metadata")
	return []byte(`{"resource":"x"}`), nil
}

var errNoCreds = (&core.Error{Code: core.CodeInvalidRequest, Message: "Unauthorized"}).
	WithHTTP(http.StatusUnauthorized, http.Header{"Www-Authenticate": {`Bearer resource_metadata="https://x/.well-known/test-metadata"`}})

func (a *recordingAuth) Authenticate(r *http.Request) (context.Context, error) {
	a.log("authenticate " + r.Method)
	sub, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Token ")
	if !ok {
		return nil, errNoCreds
	}
	p := &core.Principal{Issuer: "test"}
	if sub != "-" {
		p.Subject = sub
	}
	return core.NewContextWithPrincipal(r.Context(), p), nil
}

func (a *recordingAuth) Authorize(ctx context.Context, op core.Operation) error {
	a.mu.Lock()
	a.ops = append(a.ops, op)
	a.events = append(a.events, "authorize "+op.Method+" "+op.Name)
	a.mu.Unlock()
	if a.deny[op.Method] || a.deny[op.Name] {
		return (&core.Error{Code: core.CodeInvalidRequest, Message: "Forbidden"}).
			WithHTTP(http.StatusForbidden, http.Header{"Www-Authenticate": {`Bearer error="insufficient_scope", scope="admin"`}})
	}
	return nil
}

func (a *recordingAuth) reset() {
	a.mu.Lock()
	a.events, a.ops = nil, nil
	a.mu.Unlock()
}

func (a *recordingAuth) seen() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.events...)
}

func authServer(t *testing.T, a *recordingAuth, opts *core.ServerOptions) *core.Server {
	t.Helper()
	if opts == nil {
		opts = &core.ServerOptions{}
	}
	opts.Authenticator = a
	srv := core.NewServer(testImpl, opts)
	core.AddTool(srv, &core.Tool{Name: "echo", Description: "Echo."},
		func(ctx context.Context, req *core.CallToolRequest, in map[string]any) (string, error) {
			return "ok", nil
		})
	core.AddTool(srv, &core.Tool{Name: "needs-sampling", Description: "Needs sampling."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			return "ok", nil
		}, &core.ToolOptions{RequiredCapabilities: &core.ClientCapabilities{Sampling: &core.SamplingCapabilities{}}})
	core.AddTool(srv, &core.Tool{Name: "late-refusal", Description: "Refuses after a notification."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			req.NotifyProgress(ctx, 1, 2, "working")
			return "", (&core.Error{Code: core.CodeInvalidRequest, Message: "Forbidden"}).
				WithHTTP(http.StatusForbidden, http.Header{"Www-Authenticate": {`Bearer error="insufficient_scope"`}})
		})
	core.AddTool(srv, &core.Tool{Name: "early-refusal", Description: "Refuses at once."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			return "", (&core.Error{Code: core.CodeInvalidRequest, Message: "Forbidden"}).
				WithHTTP(http.StatusForbidden, http.Header{"Www-Authenticate": {`Bearer error="insufficient_scope"`}})
		})
	srv.AddPrompt(&core.Prompt{Name: "p"}, func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
		return &core.GetPromptResult{Messages: []core.PromptMessage{}}, nil
	})
	srv.AddResource(&core.Resource{URI: "file:///r", Name: "r"}, func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: "file:///r", Text: "x"}}}, nil
	})
	return srv
}

func withToken(r *testReq, sub string) *testReq {
	return r.withRawHeader("Authorization", "Token "+sub)
}

func TestAuthenticatorOriginBeforeAuth(t *testing.T) {
	t.Parallel()
	a := &recordingAuth{}
	srv := authServer(t, a, nil)
	// A foreign Origin without a token is 403, not 401: the Origin check
	// comes first, and the authenticator is not asked.
	r := callReq(1, "echo", nil).withRawHeader("Origin", "https://evil.example").do(t, srv)
	r.wantError(t, http.StatusForbidden, core.CodeInvalidRequest)
	if len(a.seen()) != 0 {
		t.Fatalf("authenticator called for a foreign origin: %v", a.seen())
	}
	// No token: the authenticator's 401 with its header and the CORS
	// headers core adds for an allowed origin.
	rec := httptest.NewRecorder()
	hr := callReq(1, "echo", nil).httpRequest("http://localhost/mcp")
	hr.Header.Set("Origin", "http://localhost")
	srv.ServeHTTP(rec, hr)
	if rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") == "" ||
		rec.Header().Get("Access-Control-Allow-Origin") != "http://localhost" ||
		!strings.Contains(rec.Header().Get("Access-Control-Expose-Headers"), "WWW-Authenticate") {
		t.Fatalf("401: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
}

func TestAuthenticatorPreflightUnauthenticated(t *testing.T) {
	t.Parallel()
	a := &recordingAuth{}
	srv := authServer(t, a, nil)
	rec := preflight(srv, "http://localhost/mcp", "http://localhost", "authorization, content-type")
	if rec.Code != http.StatusNoContent || !strings.Contains(strings.ToLower(rec.Header().Get("Access-Control-Allow-Headers")), "authorization") {
		t.Fatalf("preflight: %d %v", rec.Code, rec.Header())
	}
	if len(a.seen()) != 0 {
		t.Fatalf("preflight authenticated: %v", a.seen())
	}
}

func TestAuthenticatorMetadata(t *testing.T) {
	t.Parallel()
	for _, mode := range []core.Mode{core.ModeModern, core.ModeAuto, core.ModeLegacy} {
		t.Run(mode.String(), func(t *testing.T) {
			a := &recordingAuth{}
			srv := authServer(t, a, &core.ServerOptions{Mode: mode})
			hr := httptest.NewRequest(http.MethodGet, "http://localhost/.well-known/test-metadata", nil)
			hr.Header.Set("Origin", "https://any.example") // public document: no Origin check
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, hr)
			if rec.Code != 200 || rec.Body.String() != `{"resource":"x"}` || rec.Header().Get("Access-Control-Allow-Origin") != "*" ||
				rec.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("metadata: %d %v %s", rec.Code, rec.Header(), rec.Body)
			}
			if s := a.seen(); len(s) != 1 || s[0] != "metadata" {
				t.Fatalf("calls %v", s)
			}
		})
	}
	// The Host check (DNS rebinding) still comes first on loopback.
	a := &recordingAuth{}
	srv := authServer(t, a, nil)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/.well-known/test-metadata", nil)
	req.Host = "evil.example"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden || len(a.seen()) != 0 {
		t.Fatalf("foreign Host: %d, calls %v", res.StatusCode, a.seen())
	}
}

// TestAuthenticatorBeforeBody: authentication precedes reading the body, so
// an unauthenticated caller cannot make the server read 4 MiB.
func TestAuthenticatorBeforeBody(t *testing.T) {
	t.Parallel()
	a := &recordingAuth{}
	srv := authServer(t, a, &core.ServerOptions{MaxRequestBytes: 1024})
	big := rawReq(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"pad":"`+strings.Repeat("a", 4096)+`"}}`, nil)
	r := big.do(t, srv)
	if r.Status != http.StatusUnauthorized {
		t.Fatalf("unauthenticated oversized body: %d, want 401", r.Status)
	}
}

func TestAuthorizeOperations(t *testing.T) {
	t.Parallel()
	a := &recordingAuth{}
	srv := authServer(t, a, nil)
	cases := []struct {
		req  *testReq
		want core.Operation
	}{
		{callReq(1, "echo", map[string]any{"a": 1}), core.Operation{Method: "tools/call", Name: "echo", Arguments: json.RawMessage(`{"a":1}`), ProtocolVersion: modernVersion}},
		{callReq(1, "echo", nil), core.Operation{Method: "tools/call", Name: "echo", Arguments: json.RawMessage(`{}`), ProtocolVersion: modernVersion}},
		{mreq(1, "prompts/get", map[string]any{"name": "p", "arguments": map[string]any{"x": "y"}}), core.Operation{Method: "prompts/get", Name: "p", Arguments: json.RawMessage(`{"x":"y"}`), ProtocolVersion: modernVersion}},
		{mreq(1, "resources/read", map[string]any{"uri": "file:///r"}).withRawHeader(core.HeaderName, "file:///r"), core.Operation{Method: "resources/read", Name: "file:///r", ProtocolVersion: modernVersion}},
		{mreq(1, "tools/list", nil), core.Operation{Method: "tools/list", ProtocolVersion: modernVersion}},
		{mreq(1, "server/discover", nil), core.Operation{Method: "server/discover", ProtocolVersion: modernVersion}},
		{lreq(1, "initialize", map[string]any{"protocolVersion": core.ProtocolVersion20251125, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "c", "version": "1"}}, "", ""),
			core.Operation{Method: "initialize", ProtocolVersion: core.ProtocolVersion20251125}},
		{lreq(1, "tools/call", map[string]any{"name": "echo"}, core.ProtocolVersion20250618, ""), core.Operation{Method: "tools/call", Name: "echo", Arguments: json.RawMessage(`{}`), ProtocolVersion: core.ProtocolVersion20250618}},
		{lreq(1, "ping", nil, core.ProtocolVersion20250618, ""), core.Operation{Method: "ping", ProtocolVersion: core.ProtocolVersion20250618}},
	}
	for _, c := range cases {
		t.Run(c.want.Method+"/"+c.want.ProtocolVersion, func(t *testing.T) {
			a.reset()
			r := withToken(c.req, "alice").do(t, srv)
			if r.Status != 200 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			a.mu.Lock()
			ops := append([]core.Operation(nil), a.ops...)
			a.mu.Unlock()
			if len(ops) != 1 {
				t.Fatalf("Authorize called %d times: %+v", len(ops), ops)
			}
			got := ops[0]
			if got.Method != c.want.Method || got.Name != c.want.Name || string(got.Arguments) != string(c.want.Arguments) || got.ProtocolVersion != c.want.ProtocolVersion {
				t.Fatalf("operation %+v (args %s), want %+v (args %s)", got, got.Arguments, c.want, c.want.Arguments)
			}
		})
	}
}

// TestAuthorizeOrder: Authorize runs after the unknown-tool and header
// checks, before requestState verification and capability checks.
func TestAuthorizeOrder(t *testing.T) {
	t.Parallel()
	a := &recordingAuth{deny: map[string]bool{"needs-sampling": true, "echo": true}}
	srv := authServer(t, a, nil)
	// Unknown tool: -32602, no Authorize.
	withToken(callReq(1, "nope", nil), "alice").do(t, srv).wantError(t, 200, core.CodeInvalidParams)
	// Mcp-Name mismatch: -32020, no Authorize.
	withToken(callReq(1, "echo", nil).withRawHeader(core.HeaderName, "other"), "alice").do(t, srv).wantError(t, 400, core.CodeHeaderMismatch)
	if n := len(a.seen()); n != 2 { // two authentications, no authorization
		t.Fatalf("calls %v", a.seen())
	}
	// A forged requestState and a refused operation: the refusal wins.
	r := withToken(callReq(1, "echo", nil).withParam("requestState", "forged"), "alice").do(t, srv)
	r.wantError(t, http.StatusForbidden, core.CodeInvalidRequest)
	if r.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("no challenge: %v", r.Header)
	}
	// A missing client capability and a refused operation: the refusal wins.
	withToken(callReq(1, "needs-sampling", nil), "alice").do(t, srv).wantError(t, http.StatusForbidden, core.CodeInvalidRequest)
}

// TestHandlerHTTPStatus: an *Error with WithHTTP from a handler sets the
// status and headers before the first notification; after it, the answer is
// a JSON-RPC error on the stream. Both eras, streaming and buffered.
func TestHandlerHTTPStatus(t *testing.T) {
	t.Parallel()
	a := &recordingAuth{}
	srv := authServer(t, a, nil)
	for _, buffered := range []bool{false, true} {
		ctx := context.Background()
		if buffered {
			ctx = core.NewContextBuffered(ctx)
		}
		early := []*testReq{
			callReq(1, "early-refusal", nil).withMeta("progressToken", "t"),
			lreq(1, "tools/call", map[string]any{"name": "early-refusal"}, core.ProtocolVersion20250618, ""),
		}
		for _, q := range early {
			r := withToken(q, "alice").withContext(ctx).do(t, srv)
			r.wantError(t, http.StatusForbidden, core.CodeInvalidRequest)
			if r.Header.Get("WWW-Authenticate") == "" {
				t.Fatalf("buffered=%v: no header: %v", buffered, r.Header)
			}
		}
		r := withToken(callReq(1, "late-refusal", nil).withMeta("progressToken", "t"), "alice").withContext(ctx).do(t, srv)
		if r.Status != 200 || !r.SSE || r.Header.Get("WWW-Authenticate") != "" {
			t.Fatalf("buffered=%v: late refusal: %d %v %s", buffered, r.Status, r.Header, r.Body)
		}
		r.wantError(t, 200, core.CodeInvalidRequest)
	}
}

// TestPrincipalWithoutOwnerGetsNoSession: a principal with neither client
// nor subject gets no session; 403 under SessionsStateful.
func TestPrincipalWithoutOwnerGetsNoSession(t *testing.T) {
	t.Parallel()
	init := func() *testReq {
		return lreq(1, "initialize", map[string]any{"protocolVersion": core.ProtocolVersion20251125,
			"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "c", "version": "1"}}, "", "")
	}
	srv := authServer(t, &recordingAuth{}, nil)
	if r := withToken(init(), "-").do(t, srv); r.Status != 200 || r.Header.Get(core.HeaderSessionID) != "" {
		t.Fatalf("ownerless: %d session %q", r.Status, r.Header.Get(core.HeaderSessionID))
	}
	if r := withToken(init(), "alice").do(t, srv); r.Header.Get(core.HeaderSessionID) == "" {
		t.Fatalf("alice got no session")
	}
	st := authServer(t, &recordingAuth{}, &core.ServerOptions{Sessions: core.SessionsStateful})
	withToken(init(), "-").do(t, st).wantError(t, http.StatusForbidden, core.CodeInvalidRequest)
}

// TestNoAuthenticatorUnchanged: without an Authenticator nothing is asked
// and the metadata path is an ordinary request.
func TestNoAuthenticatorUnchanged(t *testing.T) {
	t.Parallel()
	srv := core.NewServer(testImpl, nil)
	hr := httptest.NewRequest(http.MethodGet, "http://localhost/.well-known/oauth-protected-resource/mcp", nil)
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, hr)
	if rec.Code == 200 {
		t.Fatalf("metadata served without an authenticator")
	}
}

// TestAuthorizeCompletion: completion/complete is a targeted operation. It
// is authorized with its reference (the prompt's name, or the resource
// template's URI, and Ref saying which) and the argument being completed,
// after the reference is checked and before the handler runs; in a
// 2025-03-26 batch too.
func TestAuthorizeCompletion(t *testing.T) {
	t.Parallel()
	a := &recordingAuth{deny: map[string]bool{"secret": true, "file:///private/{id}": true}}
	var ran atomic.Int64
	srv := authServer(t, a, &core.ServerOptions{CompletionHandler: func(ctx context.Context, req *core.CompleteRequest) (*core.CompleteResult, error) {
		ran.Add(1)
		return &core.CompleteResult{Completion: core.Completion{Values: []string{"x"}}}, nil
	}})
	srv.AddPrompt(&core.Prompt{Name: "secret"}, func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
		return &core.GetPromptResult{}, nil
	})
	complete := func(ref map[string]any) *testReq {
		return withToken(mreq(1, "completion/complete", map[string]any{"ref": ref,
			"argument": map[string]any{"name": "topic", "value": "ab"}}), "alice")
	}
	cases := []struct {
		ref  map[string]any
		want core.Operation
	}{
		{map[string]any{"type": "ref/prompt", "name": "p"},
			core.Operation{Method: "completion/complete", Name: "p", Ref: "ref/prompt", Arguments: []byte(`{"name":"topic","value":"ab"}`)}},
		{map[string]any{"type": "ref/resource", "uri": "file:///r/{x}"},
			core.Operation{Method: "completion/complete", Name: "file:///r/{x}", Ref: "ref/resource", Arguments: []byte(`{"name":"topic","value":"ab"}`)}},
	}
	for _, c := range cases {
		a.reset()
		complete(c.ref).do(t, srv).result(t)
		a.mu.Lock()
		ops := append([]core.Operation(nil), a.ops...)
		a.mu.Unlock()
		if len(ops) != 1 {
			t.Fatalf("%v: Authorize called %d times: %+v", c.ref, len(ops), ops)
		}
		got := ops[0]
		if got.Method != c.want.Method || got.Name != c.want.Name || got.Ref != c.want.Ref || string(got.Arguments) != string(c.want.Arguments) ||
			got.ProtocolVersion != modernVersion {
			t.Fatalf("operation %+v (args %s), want %+v (args %s)", got, got.Arguments, c.want, c.want.Arguments)
		}
	}
	ran.Store(0)
	// A refused prompt or template: 403 with the authenticator's challenge,
	// and the handler does not run.
	for _, ref := range []map[string]any{{"type": "ref/prompt", "name": "secret"}, {"type": "ref/resource", "uri": "file:///private/{id}"}} {
		r := complete(ref).do(t, srv)
		r.wantError(t, http.StatusForbidden, core.CodeInvalidRequest)
		if r.Header.Get("WWW-Authenticate") == "" {
			t.Fatalf("%v: no challenge: %v", ref, r.Header)
		}
	}
	// An unknown prompt is -32602 before any authorization.
	a.reset()
	complete(map[string]any{"type": "ref/prompt", "name": "nope"}).do(t, srv).wantError(t, 200, core.CodeInvalidParams)
	if ops := a.seen(); len(ops) != 1 { // the authentication only
		t.Fatalf("unknown prompt authorized: %v", ops)
	}
	// Keys are matched as the handler reads them (encoding/json: any case),
	// so a differently cased "Ref" cannot slip past the authorization.
	r := withToken(mreq(1, "completion/complete", map[string]any{"Ref": map[string]any{"type": "ref/prompt", "Name": "secret"},
		"argument": map[string]any{"name": "topic", "value": ""}}), "alice").do(t, srv)
	r.wantError(t, http.StatusForbidden, core.CodeInvalidRequest)
	// A 2025-03-26 batch is refused whole when one completion is refused.
	b := rawReq(`[{"jsonrpc":"2.0","id":1,"method":"ping"},
		{"jsonrpc":"2.0","id":2,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"secret"},"argument":{"name":"topic","value":""}}}]`,
		map[string]string{core.HeaderProtocolVersion: core.ProtocolVersion20250326})
	withToken(b, "alice").do(t, srv).wantError(t, http.StatusForbidden, core.CodeInvalidRequest)
	if n := ran.Load(); n != 0 {
		t.Fatalf("the completion handler ran %d times for refused references", n)
	}
}
