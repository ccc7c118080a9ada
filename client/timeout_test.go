package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/mcp"
)

// rpc reads a JSON-RPC request body: its id (raw) and method.
func rpc(r *http.Request) (id json.RawMessage, method string) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	b, _ := io.ReadAll(r.Body)
	json.Unmarshal(b, &m)
	return m.ID, m.Method
}

func result(id json.RawMessage, res string) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + res + `}`
}

const toolList = `{"resultType":"complete","tools":[{"name":"slow","inputSchema":{"type":"object"}}]}`

// TestRequestTimeout: a non-streaming answer is bounded as a whole. A
// server that sends its headers and then one byte of body every 100 ms (or
// never answers at all) fails the call with ErrTimeout once
// DefaultRequestTimeout has passed since the request was sent, not when it
// pleases; a per-read idle bound would never fire.
func TestRequestTimeout(t *testing.T) {
	t.Parallel()
	cases := map[string]func(w http.ResponseWriter, r *http.Request, id json.RawMessage){
		"dribbled body": func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
			// Ten minutes of whitespace, then the answer.
			if mcptest.Dribble(w, r, 6000, 100*time.Millisecond) {
				io.WriteString(w, result(id, toolList))
			}
		},
		"no headers": func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
			select {
			case <-r.Context().Done():
			case <-time.After(time.Hour):
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, result(id, toolList))
			}
		},
	}
	for name, answer := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				hc := mcptest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					id, _ := rpc(r)
					answer(w, r, id)
				}))
				c, err := client.Connect(t.Context(), "http://mcp.test/mcp", &client.Options{Mode: client.ModeModern, HTTPClient: hc, CacheEntries: -1})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				start := time.Now()
				_, err = c.ListTools(t.Context(), nil)
				if !errors.Is(err, client.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("ListTools after %v: %v, want ErrTimeout", time.Since(start), err)
				}
				if d := time.Since(start); d != client.DefaultRequestTimeout {
					t.Fatalf("failed after %v, want DefaultRequestTimeout (%v)", d, client.DefaultRequestTimeout)
				}
				// An explicit RequestTimeout replaces the default.
				c2, _ := client.Connect(t.Context(), "http://mcp.test/mcp", &client.Options{Mode: client.ModeModern, HTTPClient: hc, CacheEntries: -1, RequestTimeout: 5 * time.Second})
				defer c2.Close()
				start = time.Now()
				if _, err = c2.ListTools(t.Context(), nil); !errors.Is(err, client.ErrTimeout) || time.Since(start) != 5*time.Second {
					t.Fatalf("RequestTimeout 5s: %v after %v", err, time.Since(start))
				}
			})
		})
	}
}

// TestStreamTimeouts: an SSE response is not cut by the request timeout
// (a long tools/call, a subscription), only by silence: keep-alive comments
// count as activity, and StreamIdleTimeout without a byte fails the call
// with ErrTimeout.
func TestStreamTimeouts(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var quiet atomic.Bool // the next tools/call streams one comment, then nothing
		hc := mcptest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id, method := rpc(r)
			switch method {
			case "tools/list":
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, result(id, toolList))
				return
			case "subscriptions/listen":
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":{\"notifications\":{\"toolsListChanged\":true},\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":%s}}}\n\n", id)
				w.(http.Flusher).Flush()
				<-r.Context().Done()
				return
			case "tools/call":
			default:
				http.Error(w, "unexpected "+method, 400)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			io.WriteString(w, ": start\n\n")
			w.(http.Flusher).Flush()
			if quiet.Load() {
				<-r.Context().Done()
				return
			}
			for range 80 { // twenty minutes of keep-alives
				time.Sleep(15 * time.Second)
				if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
			fmt.Fprintf(w, "data: %s\n\n", result(id, `{"content":[{"type":"text","text":"done"}]}`))
		}))
		c, err := client.Connect(t.Context(), "http://mcp.test/mcp", &client.Options{Mode: client.ModeModern, HTTPClient: hc})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.ListTools(t.Context(), nil); err != nil {
			t.Fatal(err)
		}

		start := time.Now()
		res, err := c.CallTool(t.Context(), "slow", map[string]any{}, nil)
		if err != nil || res.IsError {
			t.Fatalf("long streamed call: %v after %v", err, time.Since(start))
		}
		if d := time.Since(start); d != 20*time.Minute {
			t.Fatalf("streamed call took %v, want 20m", d)
		}

		quiet.Store(true)
		start = time.Now()
		_, err = c.CallTool(t.Context(), "slow", map[string]any{}, nil)
		if !errors.Is(err, client.ErrTimeout) || errors.Is(err, client.ErrStreamBroken) {
			t.Fatalf("silent stream: %v, want ErrTimeout", err)
		}
		if d := time.Since(start); d != client.DefaultStreamIdleTimeout {
			t.Fatalf("silent stream failed after %v, want DefaultStreamIdleTimeout (%v)", d, client.DefaultStreamIdleTimeout)
		}

		// A subscription that stays silent ends the same way.
		start = time.Now()
		acked := false
		err = c.Listen(t.Context(), mcp.SubscriptionFilter{ToolsListChanged: true}, func(mcp.SubscriptionFilter) { acked = true }, nil)
		if !acked || !errors.Is(err, client.ErrTimeout) || time.Since(start) != client.DefaultStreamIdleTimeout {
			t.Fatalf("silent subscription: acked %v, %v after %v", acked, err, time.Since(start))
		}
	})
}

// legacyServer is a minimal 2025-11-25 server: initialize, the GET stream
// (keep-alive comments every 15 s when keepAlive, else silence; a
// notification after notifyAfter), DELETE.
type legacyServer struct {
	keepAlive   bool
	notifyAfter time.Duration
	gets        atomic.Int32
}

func (s *legacyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		n := s.gets.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		var tick <-chan time.Time
		if s.keepAlive {
			t := time.NewTicker(15 * time.Second)
			defer t.Stop()
			tick = t.C
		}
		notify := time.After(s.notifyAfter)
		for {
			select {
			case <-r.Context().Done():
				return
			case <-tick:
				io.WriteString(w, ": keep-alive\n\n")
			case <-notify:
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"get %d\"}}\n\n", n)
			}
			w.(http.Flusher).Flush()
		}
	case http.MethodDelete:
		w.WriteHeader(200)
	case http.MethodPost:
		id, method := rpc(r)
		if method == "initialize" {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "s1")
			io.WriteString(w, result(id, `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"legacy","version":"1"}}`))
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}
}

// TestGETStreamIdle: the legacy GET stream's keep-alive comments count as
// activity (one stream for half an hour); a GET stream that falls silent for
// StreamIdleTimeout is opened again rather than trusted forever.
func TestGETStreamIdle(t *testing.T) {
	t.Parallel()
	for _, keepAlive := range []bool{true, false} {
		t.Run(fmt.Sprint("keepAlive=", keepAlive), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				srv := &legacyServer{keepAlive: keepAlive, notifyAfter: 30 * time.Minute}
				got := make(chan string, 4)
				c, err := client.Connect(t.Context(), "http://mcp.test/mcp", &client.Options{Mode: client.ModeLegacy, HTTPClient: mcptest.Serve(t, srv),
					Notification: func(method string, p json.RawMessage) { got <- string(p) }})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if keepAlive {
					select {
					case p := <-got:
						if !strings.Contains(p, "get 1") || srv.gets.Load() != 1 {
							t.Fatalf("notification %s after %d GET streams, want the first stream's", p, srv.gets.Load())
						}
					case <-time.After(time.Hour):
						t.Fatal("no notification on the GET stream")
					}
					return
				}
				time.Sleep(client.DefaultStreamIdleTimeout + 2*time.Second)
				synctest.Wait()
				if n := srv.gets.Load(); n != 2 {
					t.Fatalf("%d GET streams after a silent one, want 2 (opened again)", n)
				}
			})
		})
	}
}

// pipeCore serves a real core.Server (set up by setup) behind a recorder
// and adapters/nethttp over in-memory connections (pipeServer), for tests
// in a synctest bubble; it returns the endpoint and the client to reach it.
func pipeCore(t *testing.T, opts *core.ServerOptions, setup func(*core.Server)) (string, *recorder, *http.Client) {
	t.Helper()
	h, rec := coreHandler(opts, setup)
	hc := mcptest.Serve(t, h)
	return "http://mcp.test" + nethttp.DefaultPath, rec, hc
}

// TestLegacyTimeoutCancels: a legacy call given up on Options.RequestTimeout
// is cancelled as one whose context ended: the server gets
// notifications/cancelled and the tool's context ends (in legacy, a
// closed response is not a cancellation).
func TestLegacyTimeoutCancels(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		stopped, release := make(chan struct{}), make(chan struct{})
		url, rec, hc := pipeCore(t, &core.ServerOptions{Mode: core.ModeLegacy}, func(s *core.Server) {
			core.AddTool(s, &core.Tool{Name: "block"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
				select {
				case <-ctx.Done():
					close(stopped)
					return "", ctx.Err()
				case <-release:
					return "not cancelled", nil
				}
			})
		})
		t.Cleanup(func() { close(release) }) // runs before the server closes
		c, err := client.Connect(t.Context(), url, &client.Options{Mode: client.ModeLegacy, HTTPClient: hc, RequestTimeout: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		start := time.Now()
		if _, err := c.CallTool(t.Context(), "block", nil, nil); !errors.Is(err, client.ErrTimeout) {
			t.Fatalf("err = %v, want ErrTimeout", err)
		}
		if d := time.Since(start); d != 300*time.Millisecond {
			t.Fatalf("gave up after %v, want the RequestTimeout (300ms)", d)
		}
		n := rec.last("notifications/cancelled")
		if n == nil || !bytes.Contains(n.Body, []byte(`"requestId":`)) {
			t.Fatal("no notifications/cancelled after the timeout")
		}
		select {
		case <-stopped:
		case <-time.After(30 * time.Second):
			t.Fatal("the tool's context did not end")
		}
	})
}

// TestCacheTTL: a cached result is served until its ttlMs has passed since
// it was received, and fetched again from then on; MaxTTL caps a longer
// one.
func TestCacheTTL(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		url, rec, hc := pipeCore(t, &core.ServerOptions{CacheHints: map[string]core.CacheHint{
			"tools/list":   {TTL: time.Minute, Scope: core.CacheScopePublic},
			"prompts/list": {TTL: time.Hour, Scope: core.CacheScopePublic},
		}}, func(s *core.Server) {
			s.AddPrompt(&core.Prompt{Name: "p"}, func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
				return &core.GetPromptResult{}, nil
			})
		})
		c, err := client.Connect(t.Context(), url, &client.Options{Mode: client.ModeModern, HTTPClient: hc, MaxTTL: 10 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		list := func() int {
			t.Helper()
			if _, err := c.ListTools(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
			return rec.count("tools/list")
		}
		if n := list(); n != 1 {
			t.Fatalf("tools/list %d", n)
		}
		time.Sleep(time.Minute - time.Millisecond)
		if n := list(); n != 1 {
			t.Fatalf("tools/list %d before ttlMs passed, want 1 (cached)", n)
		}
		time.Sleep(time.Millisecond)
		if n := list(); n != 2 {
			t.Fatalf("tools/list %d once ttlMs passed, want 2", n)
		}
		// An hour's ttlMs is cut to MaxTTL.
		if _, err := c.ListPrompts(t.Context(), nil, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Minute)
		if _, err := c.ListPrompts(t.Context(), nil, nil); err != nil || rec.count("prompts/list") != 2 {
			t.Fatalf("prompts/list %d after MaxTTL (%v), want 2", rec.count("prompts/list"), err)
		}
	})
}

// resumingServer is a 2025-11-25 server whose tools/call stream breaks
// after its priming event (id e1, and the retry field when retry is set);
// the GET that resumes it with Last-Event-ID gets the response.
type resumingServer struct {
	retry string // the retry field of the priming event; "" sends none
	mu    sync.Mutex
	ended time.Time // when the broken stream ended
	get   time.Time // when the resuming GET arrived
	last  string    // its Last-Event-ID
	sid   string    // its Mcp-Session-Id
	id    json.RawMessage
}

func (s *resumingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		s.mu.Lock()
		s.get, s.last, s.sid = time.Now(), r.Header.Get("Last-Event-Id"), r.Header.Get("Mcp-Session-Id")
		id := s.id
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: e2\ndata: %s\n\n", result(id, `{"content":[{"type":"text","text":"resumed"}]}`))
	case http.MethodDelete:
		w.WriteHeader(200)
	case http.MethodPost:
		id, method := rpc(r)
		switch method {
		case "initialize":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "s1")
			io.WriteString(w, result(id, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"resuming","version":"1"}}`))
		case "tools/call":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "id: e1\n")
			if s.retry != "" {
				io.WriteString(w, "retry: "+s.retry+"\n")
			}
			io.WriteString(w, "data:\n\n")
			s.mu.Lock()
			s.ended, s.id = time.Now(), id
			s.mu.Unlock()
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}
}

// TestLegacyResumeDelay: a legacy call whose stream breaks before the
// response reconnects with GET and Last-Event-ID after the stream's retry
// delay (2025-11-25 basic/transports §Resumability and Redelivery), one
// second when the server named none, and gets the response there.
func TestLegacyResumeDelay(t *testing.T) {
	t.Parallel()
	for retry, want := range map[string]time.Duration{"3000": 3 * time.Second, "": time.Second} {
		t.Run("retry="+retry, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				srv := &resumingServer{retry: retry}
				c, err := client.Connect(t.Context(), "http://mcp.test/mcp", &client.Options{Mode: client.ModeLegacy, HTTPClient: mcptest.Serve(t, srv), NoGETStream: true})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				r, err := c.CallTool(t.Context(), "slow", nil, nil)
				if err != nil || mcptest.Text(r) != "resumed" {
					t.Fatalf("call: %v %+v", err, r)
				}
				srv.mu.Lock()
				defer srv.mu.Unlock()
				if d := srv.get.Sub(srv.ended); d != want {
					t.Fatalf("resumed %v after the stream ended, want %v", d, want)
				}
				if srv.last != "e1" || srv.sid != "s1" {
					t.Fatalf("resuming GET: Last-Event-ID %q, Mcp-Session-Id %q", srv.last, srv.sid)
				}
			})
		})
	}
}
