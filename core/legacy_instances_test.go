package core_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/store/memory"
)

// Two servers sharing one store behave like two instances behind a load
// balancer: what one learns through the store, the other must honour. They
// are served in this process (http routes a.test to a, b.test to b), so that
// the tests run in synctest bubbles: the keep-alive ticks of a GET stream
// and the store polls of a waiting call, which carry what the other
// instance did, pass without real waits.
type twoInstances struct {
	a, b   *core.Server
	ua, ub string
	http   *http.Client
	store  *memory.Store
}

func newTwoInstances(t *testing.T, configure func(*core.ServerOptions), register func(*core.Server)) *twoInstances {
	t.Helper()
	store := &memory.Store{}
	keys := core.StaticKeys{core.NewRandomKey("shared")}
	mk := func() *core.Server {
		o := &core.ServerOptions{SessionStore: store, Keys: keys}
		if configure != nil {
			configure(o)
		}
		s := core.NewServer(core.Implementation{Name: "inst", Version: "1"}, o)
		register(s)
		return s
	}
	ti := &twoInstances{store: store, ua: "http://a.test/mcp", ub: "http://b.test/mcp"}
	ti.a, ti.b = mk(), mk()
	ti.http = handlerClient(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host == "b.test" {
			ti.b.ServeHTTP(w, r)
			return
		}
		ti.a.ServeHTTP(w, r)
	}))
	return ti
}

// getStreamOnA opens the GET stream of c's session on instance A.
func (ti *twoInstances) getStreamOnA(t *testing.T, c *mcptest.Client) *sseStream {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, ti.ua, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.SessionID)
	req.Header.Set("Mcp-Protocol-Version", c.Version)
	resp, err := ti.http.Do(req)
	if err != nil {
		t.Fatalf("GET stream on A: %v", err)
	}
	return newSSEStream(t, resp, nil)
}

// A legacy call waiting on instance A for the client's answer ends when the
// client cancels it through instance B, and sends no response.
func TestCancelThroughAnotherInstance(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ti := newTwoInstances(t, nil, func(s *core.Server) {
			core.AddTool(s, &core.Tool{Name: "ask", Description: "Asks."},
				func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
					if _, ok := req.Input.Elicitation("q"); ok {
						return "answered", nil
					}
					return "", core.InputRequired(core.InputRequests{"q": core.ElicitForm("Name?",
						json.RawMessage(`{"type":"object","properties":{"n":{"type":"string"}}}`))}, "")
				})
		})
		a := &mcptest.Client{URL: ti.ua, HTTP: ti.http}
		if _, err := a.Initialize(context.Background(), core.ProtocolVersion20251125, map[string]any{"elicitation": map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		b := &mcptest.Client{URL: ti.ub, HTTP: ti.http, SessionID: a.SessionID, Version: a.Version}
		// No answerer: the client shows the question and never answers.
		s := openStreamVia(t, ti.http, ti.ua, lreq(77, "tools/call", map[string]any{"name": "ask", "arguments": map[string]any{}}, a.Version, a.SessionID))
		// The elicitation on the stream means A waits for the answer: it
		// registers its waiter before it sends the request.
		if m := s.next(5 * time.Second); m["method"] != core.MethodElicit {
			t.Fatalf("got %v, want the elicitation", m)
		}
		note, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": 77, "reason": "user"}})
		r, err := b.Post(context.Background(), note, http.Header{"Mcp-Protocol-Version": {b.Version}}, nil)
		if err != nil || r.Status != http.StatusAccepted {
			t.Fatalf("cancel through B: %v %v", err, r)
		}
		// The call ends without a response (the spec: none for a cancelled
		// request), and A stops waiting.
		s.ends(5 * time.Second)
	})
}

// A cancelled call on the same instance gets no response at all.
func TestCancelledCallGetsNoResponse(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	started := make(chan struct{})
	srv := core.NewServer(core.Implementation{Name: "c", Version: "1"}, nil)
	core.AddTool(srv, &core.Tool{Name: "slow", Description: "Waits."},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			close(started)
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-release:
				return "done", nil
			}
		})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer close(release)
	c := &mcptest.Client{URL: ts.URL}
	if _, err := c.Initialize(context.Background(), core.ProtocolVersion20251125, nil); err != nil {
		t.Fatal(err)
	}
	res := cancelSlowCall(t, context.Background(), c, started)
	select {
	case r := <-res:
		if r.Result != nil || r.Error != nil {
			t.Fatalf("a cancelled request got a response: %s", r.Messages)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled call did not end")
	}
}

// A subscription made through instance B reaches the GET stream held by A,
// and a DELETE through B ends A's stream.
func TestGetStreamFollowsOtherInstance(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ti := newTwoInstances(t, func(o *core.ServerOptions) { o.StreamKeepAlive = 50 * time.Millisecond }, func(s *core.Server) {
			s.AddResource(&core.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
				return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: "x"}}}, nil
			})
		})
		c := &mcptest.Client{URL: ti.ua, HTTP: ti.http}
		if _, err := c.Initialize(context.Background(), core.ProtocolVersion20251125, nil); err != nil {
			t.Fatal(err)
		}
		events := ti.getStreamOnA(t, c)

		b := &mcptest.Client{URL: ti.ub, HTTP: ti.http, SessionID: c.SessionID, Version: c.Version}
		if r, err := b.LegacyCall(context.Background(), "resources/subscribe", map[string]any{"uri": "test://r"}, nil); err != nil || r.Error != nil {
			t.Fatalf("subscribe through B: %v %v", err, r)
		}
		ti.a.NotifyResourceUpdated("test://r")
		if e := string(events.nextRaw(3 * time.Second)); !strings.Contains(e, `"notifications/resources/updated"`) || !strings.Contains(e, `test://r`) {
			t.Fatalf("unexpected event %s", e)
		}
		dreq, _ := http.NewRequest(http.MethodDelete, ti.ub, nil)
		dreq.Header.Set("Mcp-Session-Id", c.SessionID)
		dresp, err := ti.http.Do(dreq)
		if err != nil || dresp.StatusCode != http.StatusNoContent {
			t.Fatalf("DELETE through B: %v %v", err, dresp)
		}
		dresp.Body.Close()
		if !events.closes(3 * time.Second) {
			t.Fatal("A's GET stream outlived its session")
		}
		// The stream's end must leave A serving legacy sessions (it once left a
		// lock held, and every later legacy request of A hung).
		servesLegacyVia(t, ti.http, ti.ua, c.Version)
	})
}

// However the session behind an open GET stream ends, the stream ends and
// the process keeps serving legacy sessions: its GET streams, requests in a
// session and DELETEs.
func TestGetStreamSessionEnds(t *testing.T) {
	t.Parallel()
	resource := func(s *core.Server) {
		s.AddResource(&core.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: "x"}}}, nil
		})
	}
	// streamOn initializes a session on url and opens its GET stream.
	streamOn := func(t *testing.T, hc *http.Client, url string) (*mcptest.Client, *mcptest.GetStream) {
		t.Helper()
		c := &mcptest.Client{URL: url, HTTP: hc}
		if _, err := c.Initialize(context.Background(), core.ProtocolVersion20251125, nil); err != nil {
			t.Fatal(err)
		}
		g, err := c.OpenGetStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(g.Close)
		return c, g
	}
	waitEnd := func(t *testing.T, g *mcptest.GetStream) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := g.WaitEnd(ctx); err != nil {
			t.Fatalf("the GET stream outlived its session: %v", err)
		}
	}

	t.Run("idle expiry", func(t *testing.T) {
		t.Parallel()
		// In a synctest bubble, served in this process: the sleep lets the
		// idle timeout pass, and the stream's keep-alive ticks see it.
		synctest.Test(t, func(t *testing.T) {
			o := &core.ServerOptions{StreamKeepAlive: 10 * time.Millisecond, SessionIdleTimeout: time.Minute}
			srv := core.NewServer(core.Implementation{Name: "idle", Version: "1"}, o)
			resource(srv)
			hc := handlerClient(srv)
			c, g := streamOn(t, hc, "http://mcp.test/mcp")
			time.Sleep(2 * time.Minute) // the stream never renews its session
			waitEnd(t, g)
			servesLegacyVia(t, hc, c.URL, core.ProtocolVersion20251125)
		})
	})

	t.Run("DELETE through another instance", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			ti := newTwoInstances(t, func(o *core.ServerOptions) { o.StreamKeepAlive = 10 * time.Millisecond }, resource)
			c, g := streamOn(t, ti.http, ti.ua)
			b := &mcptest.Client{URL: ti.ub, HTTP: ti.http, SessionID: c.SessionID, Version: c.Version}
			if status, err := b.Delete(context.Background()); err != nil || status != http.StatusNoContent {
				t.Fatalf("DELETE through B: %v HTTP %d", err, status)
			}
			waitEnd(t, g)
			servesLegacyVia(t, ti.http, ti.ua, c.Version)
		})
	})

	t.Run("eviction through another instance", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			ti := newTwoInstances(t, func(o *core.ServerOptions) {
				o.StreamKeepAlive = 10 * time.Millisecond
				o.MaxAnonymousSessions = 1
			}, resource)
			_, g := streamOn(t, ti.http, ti.ua)
			// A second anonymous session, made through B, evicts the first.
			if _, err := (&mcptest.Client{URL: ti.ub, HTTP: ti.http}).Initialize(context.Background(), core.ProtocolVersion20251125, nil); err != nil {
				t.Fatal(err)
			}
			waitEnd(t, g)
			servesLegacyVia(t, ti.http, ti.ua, core.ProtocolVersion20251125)
		})
	})
}

// cancelSlowCall sends the legacy tools/call "slow" in c's session, waits
// until its handler has started, cancels it with notifications/cancelled
// (its id is 2: the second request of the session) and returns the
// channel the call's response arrives on.
func cancelSlowCall(t *testing.T, ctx context.Context, c *mcptest.Client, started <-chan struct{}) <-chan *mcptest.Response {
	t.Helper()
	res := make(chan *mcptest.Response, 1)
	go func() {
		r, err := c.LegacyCall(ctx, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{}}, nil)
		if err != nil {
			t.Error(err)
		}
		res <- r
	}()
	<-started
	note, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": 2}})
	if r, err := c.Post(ctx, note, http.Header{"Mcp-Protocol-Version": {c.Version}}, nil); err != nil || r.Status != http.StatusAccepted {
		t.Fatalf("cancel: %v %v", err, r)
	}
	return res
}

// A legacy GET stream on instance A hears of the changes made on instance
// B through the ChangeBus: a tool added (list_changed) and an update of
// the resource the session subscribed to, each once.
func TestGetStreamHearsOtherInstanceChanges(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		bus := &core.MemoryChangeBus{}
		ti := newTwoInstances(t, func(o *core.ServerOptions) {
			o.StreamKeepAlive, o.ChangeBus, o.ChangePollInterval = -1, bus, time.Second
		}, func(s *core.Server) {
			s.AddResource(&core.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
				return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: "x"}}}, nil
			})
			core.AddTool(s, &core.Tool{Name: "add"}, add)
		})
		defer ti.a.Close()
		defer ti.b.Close()
		c := &mcptest.Client{URL: ti.ua, HTTP: ti.http}
		if _, err := c.Initialize(context.Background(), core.ProtocolVersion20251125, nil); err != nil {
			t.Fatal(err)
		}
		if r, err := c.LegacyCall(context.Background(), "resources/subscribe", map[string]any{"uri": "test://r"}, nil); err != nil || r.Error != nil {
			t.Fatalf("subscribe: %v %v", err, r)
		}
		events := ti.getStreamOnA(t, c)
		b := &mcptest.Client{URL: ti.ub, HTTP: ti.http}
		if _, err := b.Initialize(context.Background(), core.ProtocolVersion20251125, nil); err != nil {
			t.Fatal(err) // B serves: its changes are now published
		}
		synctest.Wait()

		core.AddTool(ti.b, &core.Tool{Name: "new"}, add)
		if e := string(events.nextRaw(3 * time.Second)); !strings.Contains(e, `"notifications/tools/list_changed"`) {
			t.Fatalf("after AddTool on B, A's GET stream got %s", e)
		}
		ti.b.NotifyResourceUpdated("test://r")
		if e := string(events.nextRaw(3 * time.Second)); !strings.Contains(e, `"notifications/resources/updated"`) || !strings.Contains(e, `test://r`) {
			t.Fatalf("after an update on B, A's GET stream got %s", e)
		}
		ti.b.NotifyResourceUpdated("test://other") // not subscribed
		time.Sleep(3 * time.Second)
		synctest.Wait()
		quiet(t, events, "after an unsubscribed update on B")
	})
}
