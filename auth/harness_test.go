package auth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/mcp"
)

// env is a core server protected by an auth.ProtectedResource, served on loopback
// (or on an in-memory network inside a testing/synctest bubble), with a
// real authorization server (authtest) beside it.
type env struct {
	as       *authtest.Server
	rs       *auth.ProtectedResource
	srv      *core.Server
	origin   string       // the MCP server's scheme and host
	resource string       // canonical resource URI
	hc       *http.Client // reaches the MCP server and the authorization servers
}

type envConfig struct {
	as      *authtest.Server
	opts    func(o *auth.Options, as *authtest.Server, resource string)
	srvOpts func(o *core.ServerOptions)
	// net, when set, serves the MCP server on this in-memory network
	// (inside the bubble of bubbleEnv), which serves the authorization
	// servers too; as must be given then.
	net *mcptest.Network
}

// bubbleOrigin is the address of the MCP server on an in-memory network.
const bubbleOrigin = "http://127.0.0.1:8080"

// inBubble runs f in a testing/synctest bubble, with the authorization
// servers (started outside the bubble, as their listeners must be) served
// on an in-memory network inside it: the bubble's clock is the resource's
// and the authorization servers' clock.
func inBubble(t *testing.T, ases []*authtest.Server, f func(t *testing.T, n *mcptest.Network)) {
	synctest.Test(t, func(t *testing.T) {
		n := mcptest.NewNetwork()
		t.Cleanup(n.Close)
		for _, as := range ases {
			n.ServeURL(as.URL, as.Handler())
		}
		f(t, n)
	})
}

// bubbleEnv runs f with the env of cfg in a testing/synctest bubble (see
// inBubble), served with its own authorization server on the bubble's
// in-memory network.
func bubbleEnv(t *testing.T, cfg envConfig, f func(t *testing.T, e *env)) {
	t.Helper()
	as := authtest.New(nil)
	t.Cleanup(as.Close)
	inBubble(t, []*authtest.Server{as}, func(t *testing.T, n *mcptest.Network) {
		cfg.as, cfg.net = as, n
		f(t, newEnv(t, cfg))
	})
}

// newEnv starts the authorization server (unless given), the MCP server
// (tools: echo, write, stepup, stream-stepup) and the resource.
func newEnv(t testing.TB, cfg envConfig) *env {
	t.Helper()
	e := &env{as: cfg.as, hc: http.DefaultClient}
	if e.as == nil {
		if cfg.net != nil {
			t.Fatal("newEnv: an env on an in-memory network needs its authorization server")
		}
		e.as = authtest.New(nil)
		t.Cleanup(e.as.Close)
	}
	var handler http.Handler
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) })
	outbound := e.as.Client()
	if cfg.net != nil {
		e.origin = bubbleOrigin
		cfg.net.ServeURL(e.origin, h)
		e.hc = cfg.net.Client()
		outbound = e.hc
	} else {
		ts := httptest.NewServer(h)
		t.Cleanup(ts.Close)
		e.origin = ts.URL
	}
	e.resource = e.origin + "/mcp"
	o := auth.Options{
		Resource: e.resource,
		Issuers:  []auth.Issuer{{Issuer: e.as.Issuer}},
		Required: []string{"mcp"},
		ToolScopes: map[string][]string{
			"write": {"files:write"},
		},
		Implies:    map[string][]string{"files:admin": {"files:write"}, "files:write": {"files:read"}},
		HTTPClient: outbound,
	}
	if cfg.opts != nil {
		cfg.opts(&o, e.as, e.resource)
	}
	rs, err := auth.New(&o)
	if err != nil {
		t.Fatal(err)
	}
	e.rs = rs
	so := &core.ServerOptions{Authenticator: rs}
	if testing.Verbose() {
		so.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if cfg.srvOpts != nil {
		cfg.srvOpts(so)
	}
	e.srv = core.NewServer(core.Implementation{Name: "auth-test", Version: "1.0.0"}, so)
	addTools(e.srv)
	handler = e.srv
	return e
}

func addTools(srv *core.Server) {
	core.AddTool(srv, &core.Tool{Name: "echo", Description: "Echoes the caller."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			ti := auth.TokenInfoFromContext(ctx)
			if ti == nil || req.Principal == nil || req.Principal.Subject != ti.Subject {
				return "", fmt.Errorf("no caller")
			}
			return "hello " + ti.Subject + " via " + ti.ClientID, nil
		})
	core.AddTool(srv, &core.Tool{Name: "write", Description: "Writes."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			return "written", nil
		})
	core.AddTool(srv, &core.Tool{Name: "stepup", Description: "Needs admin at run time."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			if err := auth.RequireScopes(ctx, "admin"); err != nil {
				return "", err
			}
			return "admin done", nil
		})
	core.AddTool(srv, &core.Tool{Name: "stream-stepup", Description: "Notifies, then needs admin."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			req.NotifyProgress(ctx, 1, 2, "started")
			if err := auth.RequireScopes(ctx, "admin"); err != nil {
				return "", err
			}
			return "admin done", nil
		})
}

// token mints a valid token for the env's resource with scope.
func (e *env) token(scope string) string {
	return e.as.Mint(authtest.Claims{Audience: []string{e.resource}, Scope: scope, Expiry: time.Now().Add(time.Hour)})
}

// reply is an HTTP response with its parsed JSON-RPC message and challenge.
type reply struct {
	status int
	header http.Header
	body   []byte
	msg    map[string]any
}

func (r *reply) challenge(t testing.TB) map[string]string {
	t.Helper()
	vals := r.header.Values("WWW-Authenticate")
	if len(vals) != 1 {
		t.Fatalf("want one WWW-Authenticate header, got %q (status %d, body %s)", vals, r.status, r.body)
	}
	chs, err := mcp.ParseChallenges(vals[0])
	if err != nil || len(chs) != 1 || chs[0].Scheme != "Bearer" {
		t.Fatalf("challenge %q: %v %+v", vals[0], err, chs)
	}
	return chs[0].Params
}

func (r *reply) errCode() int {
	e, _ := r.msg["error"].(map[string]any)
	if e == nil {
		return 0
	}
	f, _ := e["code"].(float64)
	return int(f)
}

func (r *reply) text() string {
	res, _ := r.msg["result"].(map[string]any)
	if res == nil {
		return ""
	}
	c, _ := res["content"].([]any)
	if len(c) == 0 {
		return ""
	}
	m, _ := c[0].(map[string]any)
	s, _ := m["text"].(string)
	return s
}

// rpc is a JSON-RPC request to send.
type rpc struct {
	method string
	params map[string]any
	legacy string // legacy protocol version; "" means 2026-07-28
	sessID string
	header map[string][]string
	query  string
	accept string
	meta   map[string]any // extra _meta members (2026-07-28)
}

func call(tool string) rpc {
	return rpc{method: "tools/call", params: map[string]any{"name": tool, "arguments": map[string]any{}}}
}

func (e *env) do(t testing.TB, tok string, q rpc) *reply {
	t.Helper()
	params := map[string]any{}
	for k, v := range q.params {
		params[k] = v
	}
	if q.legacy == "" {
		params["_meta"] = map[string]any{
			core.MetaProtocolVersion:    core.ProtocolVersion20260728,
			core.MetaClientCapabilities: map[string]any{"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}}},
		}
		for k, v := range q.meta {
			params["_meta"].(map[string]any)[k] = v
		}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": q.method, "params": params})
	u := e.resource
	if q.query != "" {
		u += "?" + q.query
	}
	req, _ := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if q.accept != "" {
		req.Header.Set("Accept", q.accept)
	}
	if q.legacy == "" {
		req.Header.Set("MCP-Protocol-Version", core.ProtocolVersion20260728)
		req.Header.Set("Mcp-Method", q.method)
		if n, ok := params["name"].(string); ok {
			req.Header.Set("Mcp-Name", n)
		}
	} else if q.method != "initialize" {
		req.Header.Set("MCP-Protocol-Version", q.legacy)
	}
	if q.sessID != "" {
		req.Header.Set("Mcp-Session-Id", q.sessID)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	for k, v := range q.header {
		req.Header[k] = v
	}
	return e.send(t, req)
}

func (e *env) send(t testing.TB, req *http.Request) *reply {
	t.Helper()
	resp, err := e.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := &reply{status: resp.StatusCode, header: resp.Header, body: b}
	raw := b
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The last event holds the response.
		evs, err := mcptest.ReadEvents(bytes.NewReader(b), true)
		if err != nil {
			t.Fatalf("SSE body: %v\n%s", err, b)
		}
		if len(evs) > 0 {
			raw = []byte(evs[len(evs)-1].Data)
		}
	}
	json.Unmarshal(raw, &r.msg)
	return r
}
