package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpfn/mcpfn/mcp"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/client"
)

// pipeListener is a net.Listener whose connections are net.Pipe ends, so
// that an http.Server and an http.Client can talk inside a synctest bubble
// (real sockets are not durably blocking there).
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }

// pipeServer serves h over in-memory connections and returns a client that
// reaches it at any address. It is shut down when the bubble's test ends.
func pipeServer(t *testing.T, h http.Handler) *http.Client {
	ln := &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		c, s := net.Pipe()
		select {
		case ln.conns <- s:
			return c, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ln.closed:
			return nil, net.ErrClosed
		}
	}}
	t.Cleanup(func() {
		srv.Close()
		tr.CloseIdleConnections()
	})
	return &http.Client{Transport: tr}
}

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
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			for range 6000 { // ten minutes of whitespace, then the answer
				if _, err := w.Write([]byte(" ")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
			io.WriteString(w, result(id, toolList))
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
				hc := pipeServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					id, _ := rpc(r)
					answer(w, r, id)
				}))
				c, err := client.Connect(t.Context(), "http://mcp.test/mcp", &client.Options{Mode: client.ModeModern, HTTPClient: hc, CacheEntries: -1})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				start := time.Now()
				_, err = c.ListTools(t.Context())
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
				if _, err = c2.ListTools(t.Context()); !errors.Is(err, client.ErrTimeout) || time.Since(start) != 5*time.Second {
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
		hc := pipeServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		if _, err := c.ListTools(t.Context()); err != nil {
			t.Fatal(err)
		}

		start := time.Now()
		res, err := c.CallTool(t.Context(), "slow", map[string]any{})
		if err != nil || res.IsError {
			t.Fatalf("long streamed call: %v after %v", err, time.Since(start))
		}
		if d := time.Since(start); d != 20*time.Minute {
			t.Fatalf("streamed call took %v, want 20m", d)
		}

		quiet.Store(true)
		start = time.Now()
		_, err = c.CallTool(t.Context(), "slow", map[string]any{})
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
				c, err := client.Connect(t.Context(), "http://mcp.test/mcp", &client.Options{Mode: client.ModeLegacy, HTTPClient: pipeServer(t, srv),
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
