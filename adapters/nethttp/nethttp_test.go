package nethttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

type addArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

func newServer(opts *core.ServerOptions) *core.Server {
	srv := core.NewServer(core.Implementation{Name: "calc", Version: "1.0.0"}, opts)
	core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two integers."},
		func(ctx context.Context, req *core.CallToolRequest, in addArgs) (int, error) { return in.A + in.B, nil })
	return srv
}

const addBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":40,"b":2},` +
	`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

func addRequest(target string, body io.Reader) *http.Request {
	r := httptest.NewRequest(http.MethodPost, target, body)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", "tools/call")
	r.Header.Set("Mcp-Name", "add")
	return r
}

func wantAdd(t testing.TB, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("HTTP %d: %s", rec.Code, rec.Body.Bytes())
	}
	var res struct {
		ID     json.RawMessage `json:"id"`
		Result struct {
			ResultType string `json:"resultType"`
			Content    []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, rec.Body.Bytes())
	}
	if string(res.ID) != "1" || res.Result.ResultType != "complete" || len(res.Result.Content) != 1 || res.Result.Content[0].Text != "42" {
		t.Fatalf("unexpected answer: %s", rec.Body.Bytes())
	}
}

// TestHandlerPaths checks that the handler routes only its path and adds
// nothing to what core writes.
func TestHandlerPaths(t *testing.T) {
	t.Parallel()
	srv := newServer(nil)
	cases := []struct {
		name   string
		h      http.Handler
		target string
		status int
	}{
		{"default path", nethttp.Handler(srv), "/mcp", 200},
		{"other path", nethttp.Handler(srv), "/other", 404},
		{"sub path", nethttp.Handler(srv), "/mcp/x", 404},
		{"custom path", nethttp.NewHandler(srv, &nethttp.Options{Path: "/api/mcp"}), "/api/mcp", 200},
		{"custom path, default refused", nethttp.NewHandler(srv, &nethttp.Options{Path: "/api/mcp"}), "/mcp", 404},
		{"every path", nethttp.NewHandler(srv, &nethttp.Options{Path: "*"}), "/anything", 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			c.h.ServeHTTP(rec, addRequest(c.target, strings.NewReader(addBody)))
			if rec.Code != c.status {
				t.Fatalf("HTTP %d, want %d", rec.Code, c.status)
			}
			if c.status == 200 {
				wantAdd(t, rec)
				direct := httptest.NewRecorder()
				srv.ServeHTTP(direct, addRequest("/mcp", strings.NewReader(addBody)))
				if !bytes.Equal(direct.Body.Bytes(), rec.Body.Bytes()) || direct.Header().Get("Content-Type") != rec.Header().Get("Content-Type") {
					t.Errorf("the adapter changed the response:\n%s\n%s", rec.Body.Bytes(), direct.Body.Bytes())
				}
			}
		})
	}
	t.Run("status codes come from core", func(t *testing.T) {
		rec := httptest.NewRecorder()
		r := addRequest("/mcp", strings.NewReader(addBody))
		r.Header.Del("Mcp-Name")
		nethttp.Handler(srv).ServeHTTP(rec, r)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "-32020") {
			t.Errorf("HTTP %d %s, want 400 -32020", rec.Code, rec.Body.Bytes())
		}
	})
	t.Run("nil server panics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("no panic")
			}
		}()
		nethttp.Handler(nil)
	})
}

// TestServeListenerShutdown checks the graceful shutdown: a listen stream
// gets its closing result, then ServeListener returns nil.
func TestServeListenerShutdown(t *testing.T) {
	t.Parallel()
	srv := newServer(&core.ServerOptions{StreamKeepAlive: -1})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- nethttp.ServeListener(ctx, ln, srv, &nethttp.Options{ShutdownTimeout: 5 * time.Second})
	}()
	url := "http://" + ln.Addr().String() + nethttp.DefaultPath

	body := `{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"} {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	events := mcptest.NewEventStream(res.Body, true)
	defer events.Close()
	next := func() string {
		// A bound for a broken server, not a synchronisation.
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		ev, err := events.Next(ctx)
		if err != nil {
			t.Fatalf("no event: %v", err)
		}
		return ev.Data
	}
	if ack := next(); !strings.Contains(ack, "notifications/subscriptions/acknowledged") {
		t.Fatalf("first event %s", ack)
	}
	cancel()
	last := next()
	if !strings.Contains(last, `"id":"L"`) || !strings.Contains(last, `"resultType":"complete"`) {
		t.Errorf("closing event %s, want the listen result", last)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeListener: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeListener did not return")
	}
	if _, err := http.Get(url); err == nil {
		t.Error("server still accepting connections after shutdown")
	}
}

// TestServeAddressInUse checks that Serve reports a listen error.
func TestServeAddressInUse(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = nethttp.Serve(context.Background(), ln.Addr().String(), newServer(nil), nil)
	var opErr *net.OpError
	if !errors.As(err, &opErr) {
		t.Errorf("Serve on a busy address: %v", err)
	}
}

// BenchmarkToolsCallAdd is tools/call of a two-integer add through
// nethttp.Handler with an httptest recorder.
func BenchmarkToolsCallAdd(b *testing.B) {
	h := nethttp.Handler(newServer(nil))
	body := strings.NewReader(addBody)
	req := addRequest("/mcp", body)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	wantAdd(b, rec)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		body.Reset(addBody)
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, req)
	}
	b.StopTimer()
	wantAdd(b, rec)
}
