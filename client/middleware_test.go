package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/mcp"
)

// event is what a test middleware saw of one request.
type event struct {
	Method, Target, Version string
	Modern                  bool
	Round                   int
	// Outcome: "ok", "isError", "input", "code:N", or "err".
	Outcome string
}

// tape records the events of a middleware, in order.
type tape struct {
	mu     sync.Mutex
	events []event
	log    []string
}

func (tp *tape) add(s string) {
	tp.mu.Lock()
	tp.log = append(tp.log, s)
	tp.mu.Unlock()
}

func (tp *tape) all() []event {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return append([]event(nil), tp.events...)
}

// observe returns a middleware named name that records every request and
// its outcome on tp, and adds name's _meta entry and header.
func (tp *tape) observe(name string) client.Middleware {
	return func(next client.Handler) client.Handler {
		return func(ctx context.Context, req *client.Call) (*client.Outcome, error) {
			tp.add(name + ">" + req.Method)
			req.SetMeta("com.example/"+name, "m-"+name)
			req.SetHeader("X-Mw-"+name, "h-"+name)
			resp, err := next(ctx, req)
			tp.add("<" + name + req.Method)
			ev := event{Method: req.Method, Target: req.Target, Version: req.Version, Modern: req.Modern, Round: req.Round}
			var re *mcp.Error
			switch {
			case errors.As(err, &re):
				ev.Outcome = fmt.Sprintf("code:%d", re.Code)
			case err != nil:
				ev.Outcome = "err"
			case resp.InputRequired:
				ev.Outcome = "input"
			case resp.IsError:
				ev.Outcome = "isError"
			default:
				ev.Outcome = "ok"
			}
			if name == "outer" {
				tp.mu.Lock()
				tp.events = append(tp.events, ev)
				tp.mu.Unlock()
			}
			return resp, err
		}
	}
}

// mwServer is a real mcpfn server with the tools the middleware tests call:
// echo, fail (isError), confirm (an input round) and meta (the _meta entries
// and headers the request arrived with).
func mwServer(t *testing.T, mode core.Mode) (string, *recorder) {
	return newServer(t, &core.ServerOptions{Mode: mode}, func(srv *core.Server) {
		core.AddTool(srv, &core.Tool{Name: "fail"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			return "", core.ToolErrorf("it failed")
		})
		core.AddTool(srv, &core.Tool{Name: "confirm"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			if r, ok := req.Input.Elicitation("ok"); ok {
				return "answer: " + r.Action, nil
			}
			return "", core.InputRequired(core.InputRequests{"ok": core.ElicitForm("Proceed?",
				json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`))}, "")
		})
		core.AddTool(srv, &core.Tool{Name: "meta"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			var m map[string]json.RawMessage
			_ = json.Unmarshal(req.Meta, &m)
			return fmt.Sprintf("%s %s %s %s", m["com.example/outer"], m["com.example/inner"], req.Header.Get("X-Mw-outer"), req.Header.Get("X-Mw-inner")), nil
		})
	})
}

func accept(ctx context.Context, req *client.ElicitRequest) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"ok": true}}, nil
}

// TestMiddleware: against a real mcpfn server in both eras, two
// middlewares run first-outermost around every request the client sends,
// see its method, target, version, era and round, and its outcome (a
// result, isError, a JSON-RPC error code, an input_required round), and the
// _meta entries and headers they add reach the server's handler.
func TestMiddleware(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		mode    core.Mode
		cmode   client.Mode
		version string
	}{
		{"modern", core.ModeModern, client.ModeModern, mcp.ProtocolVersion20260728},
		{"legacy", core.ModeLegacy, client.ModeLegacy, mcp.ProtocolVersion20251125},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url, _ := mwServer(t, tc.mode)
			tp := &tape{}
			c, err := client.Connect(ctx, url, &client.Options{
				Mode: tc.cmode, NoGETStream: true, Elicitation: accept,
				Middleware: []client.Middleware{tp.observe("outer"), tp.observe("inner")},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			modern := tc.cmode == client.ModeModern

			r, err := c.CallTool(ctx, "meta", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := mcptest.Text(r), `"m-outer" "m-inner" h-outer h-inner`; got != want {
				t.Errorf("the server saw %q, want %q", got, want)
			}
			if r, err := c.CallTool(ctx, "fail", nil, nil); err != nil || !r.IsError {
				t.Fatalf("fail: %+v, %v", r, err)
			}
			if _, err := c.CallTool(ctx, "nope", nil, nil); err == nil {
				t.Fatal("an unknown tool succeeded")
			}
			if r, err := c.CallTool(ctx, "confirm", nil, nil); err != nil || mcptest.Text(r) != "answer: accept" {
				t.Fatalf("confirm: %+v, %v", r, err)
			}

			var want []event
			if !modern {
				want = append(want, event{Method: "initialize", Version: tc.version, Outcome: "ok"})
			} else {
				// The first tools/call reads tools/list for the tools'
				// x-mcp-header declarations.
				want = append(want, event{Method: "tools/list", Version: tc.version, Modern: true, Outcome: "ok"})
			}
			ev := func(target, outcome string, round int) event {
				return event{Method: "tools/call", Target: target, Version: tc.version, Modern: modern, Round: round, Outcome: outcome}
			}
			want = append(want, ev("meta", "ok", 0), ev("fail", "isError", 0))
			if modern {
				// An unknown tool is not in the list: the client reads it
				// again before it sends the call.
				want = append(want, event{Method: "tools/list", Version: tc.version, Modern: true, Outcome: "ok"})
			}
			want = append(want, ev("nope", fmt.Sprintf("code:%d", mcp.CodeInvalidParams), 0))
			if modern {
				want = append(want, ev("confirm", "input", 0), ev("confirm", "ok", 1))
			} else {
				// Legacy asks on the call's stream: one request.
				want = append(want, ev("confirm", "ok", 0))
			}
			got := tp.all()
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("events:\n got %v\nwant %v", got, want)
			}
			// First outermost: outer sees the request first and the outcome
			// last.
			tp.mu.Lock()
			head := strings.Join(tp.log[:4], " ")
			tp.mu.Unlock()
			m := want[0].Method
			if wantHead := "outer>" + m + " inner>" + m + " <inner" + m + " <outer" + m; head != wantHead {
				t.Errorf("order %q, want %q", head, wantHead)
			}
		})
	}
}

// TestMiddlewareShortCircuit: a middleware returning an error stops the
// request: nothing is sent and the caller gets the error; one returning a
// Outcome of its own answers the call, again without sending.
func TestMiddlewareShortCircuit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, mode := range []client.Mode{client.ModeModern, client.ModeLegacy} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			t.Parallel()
			url, rec := mwServer(t, core.ModeAuto)
			denied := errors.New("denied by policy")
			inner := 0
			c, err := client.Connect(ctx, url, &client.Options{
				Mode: mode, NoGETStream: true,
				Middleware: []client.Middleware{
					func(next client.Handler) client.Handler {
						return func(ctx context.Context, req *client.Call) (*client.Outcome, error) {
							switch req.Target {
							case "echo":
								return nil, denied
							case "canned":
								return &client.Outcome{Result: json.RawMessage(`{"content":[{"type":"text","text":"from the middleware"}]}`)}, nil
							}
							return next(ctx, req)
						}
					},
					func(next client.Handler) client.Handler {
						return func(ctx context.Context, req *client.Call) (*client.Outcome, error) {
							if req.Method == "tools/call" {
								inner++
							}
							return next(ctx, req)
						}
					},
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := c.CallTool(ctx, "echo", map[string]any{"s": "x"}, nil); !errors.Is(err, denied) {
				t.Fatalf("err = %v, want the middleware's", err)
			}
			r, err := c.CallTool(ctx, "canned", nil, nil)
			if err != nil || mcptest.Text(r) != "from the middleware" {
				t.Fatalf("canned: %+v, %v", r, err)
			}
			if n := rec.count("tools/call"); n != 0 || inner != 0 {
				t.Fatalf("tools/call sent %d times, the inner middleware ran %d times; want 0", n, inner)
			}
		})
	}
}

// TestMiddlewareHeaders: a middleware's header reaches every HTTP request
// of its Call, but cannot replace the headers the protocol sets; a
// deleted _meta entry is not sent.
func TestMiddlewareHeaders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := mwServer(t, core.ModeModern)
	c, err := client.Connect(ctx, url, &client.Options{
		Mode: client.ModeModern,
		Middleware: []client.Middleware{func(next client.Handler) client.Handler {
			return func(ctx context.Context, req *client.Call) (*client.Outcome, error) {
				req.SetHeader("Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
				req.SetHeader("Mcp-Method", "bogus")
				if _, ok := req.Meta[mcp.MetaClientInfo]; !ok {
					return nil, errors.New("no clientInfo in Meta")
				}
				delete(req.Meta, mcp.MetaClientInfo)
				req.SetMeta("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
				return next(ctx, req)
			}
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallTool(ctx, "echo", map[string]any{"s": "x"}, nil); err != nil {
		t.Fatal(err)
	}
	s := rec.last("tools/call")
	if s.Header.Get("Traceparent") == "" || s.Header.Get("Mcp-Method") != "tools/call" {
		t.Errorf("headers: traceparent %q, Mcp-Method %q", s.Header.Get("Traceparent"), s.Header.Get("Mcp-Method"))
	}
	var body struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(s.Body, &body); err != nil {
		t.Fatal(err)
	}
	if _, ok := body.Params.Meta[mcp.MetaClientInfo]; ok {
		t.Error("a deleted _meta entry was sent")
	}
	if string(body.Params.Meta["traceparent"]) != `"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"` ||
		body.Params.Meta[mcp.MetaProtocolVersion] == nil {
		t.Errorf("_meta sent: %s", s.Body)
	}
}

// TestMiddlewareChallengeIsOneCall: a request sent again after a 401
// challenge authorized a new token is the same Call: the middleware runs
// once, its header is on both HTTP attempts, and it sees the success.
func TestMiddlewareChallengeIsOneCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := mwServer(t, core.ModeModern)
	rec.fault = func(w http.ResponseWriter, r *http.Request, s *seen) bool {
		if s.RPC == "tools/call" && r.Header.Get("Authorization") != "Bearer good" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://x/.well-known/oauth-protected-resource"`)
			w.WriteHeader(http.StatusUnauthorized)
			return true
		}
		return false
	}
	tp := &tape{}
	c, err := client.Connect(ctx, url, &client.Options{Mode: client.ModeModern,
		TokenSource: &challenger{tok: "stale", good: "good", fix: true},
		Middleware:  []client.Middleware{tp.observe("outer")}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallTool(ctx, "echo", map[string]any{"s": "x"}, nil); err != nil {
		t.Fatal(err)
	}
	var calls []event
	for _, e := range tp.all() {
		if e.Method == "tools/call" {
			calls = append(calls, e)
		}
	}
	if len(calls) != 1 || calls[0].Outcome != "ok" {
		t.Fatalf("middleware saw %v, want one successful tools/call", calls)
	}
	n := 0
	for _, s := range rec.all() {
		if s.RPC == "tools/call" {
			n++
			if s.Header.Get("X-Mw-outer") != "h-outer" {
				t.Errorf("HTTP attempt %d without the middleware's header", n)
			}
		}
	}
	if n != 2 {
		t.Fatalf("tools/call sent %d times, want 2 (the challenge, the retry)", n)
	}
}

// TestMiddlewareListen: subscriptions/listen is one Call whose Handler
// returns when the subscription ends, carrying the middleware's _meta.
func TestMiddlewareListen(t *testing.T) {
	t.Parallel()
	url, rec := mwServer(t, core.ModeModern)
	tp := &tape{}
	c, err := client.Connect(context.Background(), url, &client.Options{Mode: client.ModeModern,
		Middleware: []client.Middleware{tp.observe("outer")}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	err = c.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true}, func(mcp.SubscriptionFilter) { cancel() }, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := tp.all()
	if len(got) != 1 || got[0].Method != "subscriptions/listen" || !got[0].Modern {
		t.Fatalf("events %v", got)
	}
	s := rec.last("subscriptions/listen")
	if s == nil || !strings.Contains(string(s.Body), `"com.example/outer":"m-outer"`) {
		t.Fatalf("subscriptions/listen sent without the middleware's _meta: %v", s)
	}
}

// TestMiddlewareCacheHit: a result the cache serves sends nothing, so the
// middleware does not see it.
func TestMiddlewareCacheHit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, &core.ServerOptions{Mode: core.ModeModern, CacheHints: map[string]core.CacheHint{
		"tools/list": {TTL: time.Minute, Scope: core.CacheScopePublic}}}, nil)
	tp := &tape{}
	c := connect(t, ctx, url, &client.Options{Mode: client.ModeModern, Middleware: []client.Middleware{tp.observe("outer")}})
	for range 2 {
		if _, err := c.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, e := range tp.all() {
		if e.Method == "tools/list" {
			n++
		}
	}
	if n != 1 || rec.count("tools/list") != 1 {
		t.Fatalf("middleware saw tools/list %d times, the server %d; want 1 and 1", n, rec.count("tools/list"))
	}
}

// TestMiddlewareSessionRenewal: a legacy request the server answers 404
// (session gone) is sent again in a new session within the same Call; the
// new session's initialize is a Call of its own, inside it.
func TestMiddlewareSessionRenewal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := mwServer(t, core.ModeLegacy)
	var once sync.Once
	rec.fault = func(w http.ResponseWriter, r *http.Request, s *seen) bool {
		gone := false
		if s.RPC == "tools/call" {
			once.Do(func() { gone = true })
		}
		if gone {
			w.WriteHeader(http.StatusNotFound)
		}
		return gone
	}
	tp := &tape{}
	c := connect(t, ctx, url, &client.Options{Mode: client.ModeLegacy, NoGETStream: true,
		Middleware: []client.Middleware{tp.observe("outer")}})
	first := c.SessionID()
	if _, err := c.CallTool(ctx, "echo", map[string]any{"s": "x"}, nil); err != nil {
		t.Fatal(err)
	}
	if c.SessionID() == first {
		t.Fatal("the session was not renewed")
	}
	tp.mu.Lock()
	log := strings.Join(tp.log, " ")
	tp.mu.Unlock()
	want := "outer>initialize <outerinitialize outer>tools/call outer>initialize <outerinitialize <outertools/call"
	if log != want {
		t.Fatalf("middleware log %q, want %q", log, want)
	}
	if rec.count("tools/call") != 2 {
		t.Fatalf("tools/call sent %d times, want 2", rec.count("tools/call"))
	}
}
