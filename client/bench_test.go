package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/callbench"
)

func benchServer(b testing.TB) string {
	srv := core.NewServer(core.Implementation{Name: "bench", Version: "1"}, &core.ServerOptions{
		CacheHints: map[string]core.CacheHint{"tools/list": {TTL: time.Hour, Scope: core.CacheScopePublic}},
	})
	core.AddTool(srv, &core.Tool{Name: "add"}, func(ctx context.Context, req *core.CallToolRequest, in struct {
		A int `json:"a"`
		B int `json:"b"`
	}) (struct {
		Sum int `json:"sum"`
	}, error) {
		return struct {
			Sum int `json:"sum"`
		}{in.A + in.B}, nil
	})
	ts := httptest.NewServer(nethttp.Handler(srv))
	b.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// TestListToolsCachedAllocations holds a cached ListTools to one allocation,
// the caller's copy of the page's tool list (testing.AllocsPerRun, so not
// in parallel): the request it would have sent is not built on the heap.
func TestListToolsCachedAllocations(t *testing.T) {
	url := benchServer(t)
	ctx := context.Background()
	var posts atomic.Int64
	c, err := client.Connect(ctx, url, &client.Options{Mode: client.ModeModern, HTTPClient: &http.Client{
		Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPost {
				posts.Add(1)
			}
			return http.DefaultTransport.RoundTrip(r)
		}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	before := posts.Load()
	n := testing.AllocsPerRun(100, func() {
		tools, err := c.ListTools(ctx, nil)
		if err != nil || len(tools) != 1 || tools[0].Name != "add" {
			t.Fatalf("ListTools = %v, %v", tools, err)
		}
	})
	if got := posts.Load() - before; got != 0 {
		t.Fatalf("%d requests reached the server: the list was not served from the cache", got)
	}
	if n > 1+raceAllocSlack {
		t.Errorf("%v allocations per cached ListTools, budget 1 (+%d under the race detector)", n, raceAllocSlack)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// BenchmarkListToolsCached: tools/list served from the cache (ttlMs from the
// server's hint).
func BenchmarkListToolsCached(b *testing.B) {
	url := benchServer(b)
	ctx := context.Background()
	c, err := client.Connect(ctx, url, &client.Options{Mode: client.ModeModern})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ListTools(ctx, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.ListTools(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallTool: one tools/call round trip over loopback, per era.
func BenchmarkCallTool(b *testing.B) {
	url := benchServer(b)
	for _, mode := range []client.Mode{client.ModeModern, client.ModeLegacy} {
		b.Run(mode.String(), func(b *testing.B) {
			callbench.CallAdd(b, url, &client.Options{Mode: mode, NoGETStream: true})
		})
	}
}

// BenchmarkCallToolMiddleware: BenchmarkCallTool with no middleware, an
// empty Options.Middleware, and one that only calls next (the cost of the
// seam: a Call, its Meta and the re-encoded _meta). Compare with
// benchstat -col /chain.
func BenchmarkCallToolMiddleware(b *testing.B) {
	url := benchServer(b)
	pass := func(next client.Handler) client.Handler { return next }
	wrap := func(next client.Handler) client.Handler {
		return func(ctx context.Context, req *client.Call) (*client.Outcome, error) { return next(ctx, req) }
	}
	for _, mode := range []client.Mode{client.ModeModern, client.ModeLegacy} {
		for _, ch := range []struct {
			name string
			mw   []client.Middleware
		}{{"none", nil}, {"empty", []client.Middleware{}}, {"identity", []client.Middleware{pass}}, {"one", []client.Middleware{wrap}}} {
			b.Run("mode="+mode.String()+"/chain="+ch.name, func(b *testing.B) {
				callbench.CallAdd(b, url, &client.Options{Mode: mode, NoGETStream: true, Middleware: ch.mw})
			})
		}
	}
}
