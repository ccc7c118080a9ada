package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/mcp"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// restartable serves one real core.Server at a time behind a recorder;
// restart swaps in a fresh one, which knows none of the sessions of the
// one before (a server restart).
type restartable struct {
	cur   atomic.Pointer[http.Handler]
	build func() http.Handler
	rec   *recorder
	url   string
}

func newRestartable(t *testing.T, build func() http.Handler) *restartable {
	t.Helper()
	r := &restartable{build: build, rec: &recorder{}}
	r.restart()
	ts := httptest.NewServer(r.rec.wrap(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		(*r.cur.Load()).ServeHTTP(w, req)
	})))
	t.Cleanup(ts.Close)
	r.url = ts.URL + nethttp.DefaultPath
	return r
}

func (r *restartable) restart() {
	h := r.build()
	r.cur.Store(&h)
}

// TestLegacySessionNotFound: a 404 to a request that carried a session id
// starts a new session and sends the request once more, whatever the body
// (core and the official TypeScript SDK answer with a JSON-RPC error); the
// request that got the 404 was not processed, so the tool runs once.
func TestLegacySessionNotFound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var runs atomic.Int32
	srv := newRestartable(t, func() http.Handler {
		s := core.NewServer(core.Implementation{Name: "restart", Version: "1"}, &core.ServerOptions{Mode: core.ModeLegacy})
		core.AddTool(s, &core.Tool{Name: "count"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
			return strconv.Itoa(int(runs.Add(1))), nil
		})
		return nethttp.Handler(s)
	})
	rec := srv.rec
	c := connect(t, ctx, srv.url, &client.Options{Mode: client.ModeLegacy, NoGETStream: true})
	if _, err := c.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}

	// The server restarts: core answers the old id with 404 and a JSON-RPC
	// error body.
	srv.restart()
	if _, err := c.ListTools(ctx, nil); err != nil {
		t.Fatalf("after a restart: %v", err)
	}
	if n := rec.count("initialize"); n != 2 {
		t.Fatalf("initialize sent %d times, want 2", n)
	}
	srv.restart()
	r, err := c.CallTool(ctx, "count", nil, nil)
	if err != nil {
		t.Fatalf("call after a restart: %v", err)
	}
	if got := mcptest.Text(r); got != "1" || runs.Load() != 1 {
		t.Fatalf("tool ran %d times (result %q), want once", runs.Load(), got)
	}

	// The official TypeScript SDK's answer to an unknown session.
	const tsBody = `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`
	var once atomic.Bool
	rec.fault = func(w http.ResponseWriter, r *http.Request, s *seen) bool {
		if s.RPC == "tools/call" && r.Header.Get("Mcp-Session-Id") != "" && once.CompareAndSwap(false, true) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(tsBody))
			return true
		}
		return false
	}
	inits := rec.count("initialize")
	if _, err := c.CallTool(ctx, "count", nil, nil); err != nil {
		t.Fatalf("TypeScript-style 404: %v", err)
	}
	if rec.count("initialize") != inits+1 || runs.Load() != 2 {
		t.Fatalf("initialize %d (want %d), runs %d (want 2)", rec.count("initialize"), inits+1, runs.Load())
	}

	// A server that keeps answering 404: one new session, one resend, then
	// the error.
	rec.fault = func(w http.ResponseWriter, r *http.Request, s *seen) bool {
		if s.RPC == "tools/call" && r.Header.Get("Mcp-Session-Id") != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(tsBody))
			return true
		}
		return false
	}
	inits, calls := rec.count("initialize"), rec.count("tools/call")
	_, err = c.CallTool(ctx, "count", nil, nil)
	var re *mcp.Error
	if !errors.As(err, &re) || re.ResponseStatus() != http.StatusNotFound {
		t.Fatalf("err = %v, want the 404", err)
	}
	if rec.count("initialize") != inits+1 || rec.count("tools/call") != calls+2 {
		t.Fatalf("initialize +%d tools/call +%d, want +1 and +2", rec.count("initialize")-inits, rec.count("tools/call")-calls)
	}
}

func regionTool(s *core.Server) {
	core.AddTool(s, &core.Tool{Name: "where", InputSchema: json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"level":{"type":"integer","x-mcp-header":"Level"}}}`)},
		func(ctx context.Context, req *core.CallToolRequest, in map[string]any) (string, error) {
			return fmt.Sprintf("region=%v", in["region"]), nil
		})
}

// TestParamHeadersBeforeList: a call to a tool whose declarations the
// client has not seen lists the tools first, so that the first tools/call
// already carries its Mcp-Param-* headers (non-ASCII values in the Base64
// form), with no -32020 round trip.
func TestParamHeadersBeforeList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, nil, regionTool)
	c := connect(t, ctx, url, &client.Options{Mode: client.ModeModern})
	if _, err := c.CallTool(ctx, "where", map[string]any{"region": "Zürich", "level": 2}, nil); err != nil {
		t.Fatal(err)
	}
	if calls, lists := rec.count("tools/call"), rec.count("tools/list"); calls != 1 || lists != 1 {
		t.Fatalf("tools/call %d, tools/list %d; want 1 and 1", calls, lists)
	}
	h := rec.last("tools/call").Header
	if got := h.Get("Mcp-Param-Region"); got != "=?base64?WsO8cmljaA==?=" {
		t.Errorf("Mcp-Param-Region = %q", got)
	}
	if got := h.Get("Mcp-Param-Level"); got != "2" {
		t.Errorf("Mcp-Param-Level = %q", got)
	}
	// Known declarations: no list before the next call.
	if _, err := c.CallTool(ctx, "where", map[string]any{"region": "eu-west-1"}, nil); err != nil {
		t.Fatal(err)
	}
	if rec.count("tools/list") != 1 || rec.last("tools/call").Header.Get("Mcp-Param-Region") != "eu-west-1" {
		t.Fatalf("second call: tools/list %d, header %q", rec.count("tools/list"), rec.last("tools/call").Header.Get("Mcp-Param-Region"))
	}

	// CallToolOnce does the same.
	c2, _ := client.Connect(ctx, url, &client.Options{Mode: client.ModeModern})
	defer c2.Close()
	if _, _, err := c2.CallToolOnce(ctx, "where", map[string]any{"region": "Zürich"}, nil); err != nil {
		t.Fatal(err)
	}
	if rec.count("tools/list") != 2 || rec.last("tools/call").Header.Get("Mcp-Param-Region") != "=?base64?WsO8cmljaA==?=" {
		t.Fatalf("CallToolOnce: tools/list %d, header %q", rec.count("tools/list"), rec.last("tools/call").Header.Get("Mcp-Param-Region"))
	}
}

// TestParamHeadersPrefetchBounds: the list read before a call stops at the
// page that names the tool, reads a bounded number of pages, and is not
// repeated for a tool it did not find.
func TestParamHeadersPrefetchBounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, &core.ServerOptions{PageSize: 1}, func(s *core.Server) {
		regionTool(s)
		for i := range 300 {
			core.AddTool(s, &core.Tool{Name: fmt.Sprintf("t%03d", i)}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
				return "ok", nil
			})
		}
	})
	c := connect(t, ctx, url, &client.Options{Mode: client.ModeModern})
	// "echo" sorts before the rest: its page is the first.
	if _, err := c.CallTool(ctx, "echo", map[string]any{"s": "x"}, nil); err != nil {
		t.Fatal(err)
	}
	if n := rec.count("tools/list"); n != 1 {
		t.Fatalf("tools/list %d times for a tool on the first page", n)
	}
	// A tool the server does not list: a bounded walk, then the call
	// without headers (the server answers it).
	_, err := c.CallTool(ctx, "missing", nil, nil)
	if !errors.Is(err, &mcp.Error{Code: core.CodeInvalidParams}) {
		t.Fatalf("err = %v", err)
	}
	walked := rec.count("tools/list")
	if walked > 40 {
		t.Fatalf("tools/list %d times: unbounded", walked)
	}
	// The walk is not repeated for the same tool.
	c.CallTool(ctx, "missing", nil, nil)
	if n := rec.count("tools/list"); n != walked {
		t.Fatalf("tools/list %d, want %d: the walk was repeated", n, walked)
	}
}

// principals routes each request, by its Authorization, to a real
// core.Server of its own whose private tools/list names the principal:
// Alice's tokens ("alice", "alice-2") see alice_tool, Bob sees bob_tool,
// no credential sees anon_tool.
func principals(t *testing.T) (string, *recorder) {
	t.Helper()
	hints := map[string]core.CacheHint{"tools/list": {TTL: time.Minute, Scope: core.CacheScopePrivate}}
	serverOf := func(tool string) http.Handler {
		s := core.NewServer(core.Implementation{Name: tool, Version: "1"}, &core.ServerOptions{CacheHints: hints})
		core.AddTool(s, &core.Tool{Name: tool}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) { return tool, nil })
		return nethttp.Handler(s)
	}
	alice, bob, anon := serverOf("alice_tool"), serverOf("bob_tool"), serverOf("anon_tool")
	rec := &recorder{}
	ts := httptest.NewServer(rec.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Authorization") {
		case "Bearer alice", "Bearer alice-2":
			alice.ServeHTTP(w, r)
		case "Bearer bob":
			bob.ServeHTTP(w, r)
		case "":
			anon.ServeHTTP(w, r)
		default:
			w.WriteHeader(http.StatusUnauthorized)
		}
	})))
	t.Cleanup(ts.Close)
	return ts.URL + nethttp.DefaultPath, rec
}

// toolNames joins the names of a ListTools answer, or describes its error.
func toolNames(tools []*mcp.Tool, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	return strings.Join(names, ",")
}

// TestCachePerCallAuthorization: a call that passes its own Authorization,
// in any spelling and by either option, bypasses the cache: it neither gets
// the connection's private entry nor leaves its own.
func TestCachePerCallAuthorization(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := principals(t)
	c := connect(t, ctx, url, &client.Options{Mode: client.ModeModern, TokenSource: client.StaticToken("alice")})
	if got := toolNames(c.ListTools(ctx, nil)); got != "alice_tool" {
		t.Fatalf("alice got %q", got)
	}
	for _, h := range []http.Header{
		{"Authorization": {"Bearer bob"}},
		{"authorization": {"Bearer bob"}},
		{"AUTHORIZATION": {"Bearer bob"}},
	} {
		if got := toolNames(c.ListTools(ctx, &client.CallOptions{Header: h})); got != "bob_tool" {
			t.Fatalf("a call with Bob's header %v got %q", h, got)
		}
		if sent := rec.last("tools/list").Header.Values("Authorization"); len(sent) != 1 || sent[0] != "Bearer bob" {
			t.Fatalf("sent Authorization %q", sent)
		}
	}
	if got := toolNames(c.ListTools(ctx, &client.CallOptions{Token: "bob"})); got != "bob_tool" {
		t.Fatalf("WithAuthorization(bob) got %q", got)
	}
	// Bob's answers were not stored: Alice's entry is still served.
	n := rec.count("tools/list")
	if got := toolNames(c.ListTools(ctx, nil)); got != "alice_tool" || rec.count("tools/list") != n {
		t.Fatalf("alice after bob: %q, %d requests", got, rec.count("tools/list")-n)
	}
	// No credential at all keeps entries of its own; a per-call one
	// bypasses them.
	c3, _ := client.Connect(ctx, url, &client.Options{Mode: client.ModeModern})
	defer c3.Close()
	if got := toolNames(c3.ListTools(ctx, nil)); got != "anon_tool" {
		t.Fatalf("no credential got %q", got)
	}
	if got := toolNames(c3.ListTools(ctx, &client.CallOptions{Header: http.Header{"Authorization": {"Bearer alice"}}})); got != "alice_tool" {
		t.Fatalf("no credential, then Alice's header: %q", got)
	}
}

// TestCacheRenewedToken: a token the connection's source renews (on
// expiry) keeps the cache: it is the same credential.
func TestCacheRenewedToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := principals(t)
	src := &challenger{tok: "alice"}
	c := connect(t, ctx, url, &client.Options{Mode: client.ModeModern, TokenSource: src})
	if got := toolNames(c.ListTools(ctx, nil)); got != "alice_tool" {
		t.Fatalf("alice got %q", got)
	}
	src.mu.Lock()
	src.tok = "alice-2"
	src.mu.Unlock()
	if got := toolNames(c.ListTools(ctx, nil)); got != "alice_tool" || rec.count("tools/list") != 1 {
		t.Fatalf("after a renewed token: %q, tools/list sent %d times (want 1: served from the cache)", got, rec.count("tools/list"))
	}
}

// TestCacheCredentialSources: a static Authorization header (Options.Header)
// and a token source that starts returning a token are two credentials,
// and only one Authorization is ever sent.
func TestCacheCredentialSources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := principals(t)
	lazy := &challenger{tok: ""}
	c := connect(t, ctx, url, &client.Options{Mode: client.ModeModern, TokenSource: lazy,
		Header: http.Header{"authorization": {"Bearer bob"}}})
	if got := toolNames(c.ListTools(ctx, nil)); got != "bob_tool" {
		t.Fatalf("static header got %q", got)
	}
	lazy.mu.Lock()
	lazy.tok = "alice"
	lazy.mu.Unlock()
	if got := toolNames(c.ListTools(ctx, nil)); got != "alice_tool" {
		t.Fatalf("the token source's first token got %q", got)
	}
	if sent := rec.last("tools/list").Header.Values("Authorization"); len(sent) != 1 || sent[0] != "Bearer alice" {
		t.Fatalf("sent Authorization %q", sent)
	}
	// The source falls silent again: the static header is back, and so is
	// its entry.
	lazy.mu.Lock()
	lazy.tok = ""
	lazy.mu.Unlock()
	n := rec.count("tools/list")
	if got := toolNames(c.ListTools(ctx, nil)); got != "bob_tool" || rec.count("tools/list") != n {
		t.Fatalf("static header again: %q, %d requests", got, rec.count("tools/list")-n)
	}
}

// TestCacheChallengeDropsPrivate: a successful challenge is a new
// authorization (new scopes, maybe a new user): private entries go, and an
// answer to a request sent before it is not stored.
func TestCacheChallengeDropsPrivate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := principals(t)
	src := &challenger{tok: "alice", good: "bob", fix: true}
	c := connect(t, ctx, url, &client.Options{Mode: client.ModeModern, TokenSource: src})
	challengeDropsPrivate(t, ctx, rec, c, c)
}

// challengeDropsPrivate lists Alice's tools through read; then the server
// stops accepting Alice's token, a call through call meets the challenge
// that yields Bob's, and read must list Bob's tools: the challenge dropped
// Alice's private entry.
func challengeDropsPrivate(t *testing.T, ctx context.Context, rec *recorder, read, call *client.Conn) {
	t.Helper()
	if got := toolNames(read.ListTools(ctx, nil)); got != "alice_tool" {
		t.Fatalf("got %q", got)
	}
	rec.fault = revoke("alice")
	if _, err := call.CallTool(ctx, "bob_tool", nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(read.ListTools(ctx, nil)); got != "bob_tool" {
		t.Fatalf("after the challenge: %q, want bob_tool (alice's private entry must go)", got)
	}
}

// TestLegacyMaxRounds: Options.MaxRounds bounds the server requests for
// input (elicitation, sampling, roots) one legacy call answers; the next
// one ends the call with a *MaxRoundsError, and the server is told.
func TestLegacyMaxRounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, &core.ServerOptions{Mode: core.ModeLegacy}, func(s *core.Server) {
		core.AddTool(s, &core.Tool{Name: "forever"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
			return "", core.InputRequired(core.InputRequests{"q": core.ElicitForm("again?", json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`))}, "")
		})
	})
	o := handlers()
	var asked atomic.Int32
	elicit := o.Elicitation
	o.Elicitation = func(ctx context.Context, req *client.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		return elicit(ctx, req)
	}
	o.Mode = client.ModeLegacy
	o.MaxRounds = 3
	o.NoGETStream = true
	c := connect(t, ctx, url, o)
	_, err := c.CallTool(ctx, "forever", nil, nil)
	var mr *client.MaxRoundsError
	if !errors.Is(err, client.ErrMaxRounds) || !errors.As(err, &mr) || mr.Rounds != 3 {
		t.Fatalf("err = %v", err)
	}
	if n := asked.Load(); n != 3 {
		t.Fatalf("elicitation asked %d times, want 3", n)
	}
	if rec.count("notifications/cancelled") != 1 {
		t.Fatalf("notifications/cancelled %d", rec.count("notifications/cancelled"))
	}
	// The session still serves calls.
	if _, err := c.CallTool(ctx, "echo", map[string]any{"s": "after"}, nil); err != nil {
		t.Fatal(err)
	}
}

// revoke is a fault that answers every request carrying the bearer token
// tok with a 401 challenge, as a server does once it stops accepting it.
func revoke(tok string) func(http.ResponseWriter, *http.Request, *seen) bool {
	return func(w http.ResponseWriter, r *http.Request, s *seen) bool {
		if r.Header.Get("Authorization") != "Bearer "+tok {
			return false
		}
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://x/.well-known/oauth-protected-resource"`)
		w.WriteHeader(http.StatusUnauthorized)
		return true
	}
}
