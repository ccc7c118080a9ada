// Package clientbench measures package client beside the official go-sdk
// client (github.com/modelcontextprotocol/go-sdk v1.8.0), against the same
// in-process mcpfn server. It is its own module so that go-sdk never enters
// the framework's go.mod.
//
//	cd test/clientbench && go test -run '^$' -bench . -benchmem
package clientbench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

func server(tb testing.TB) string {
	srv := core.NewServer(core.Implementation{Name: "bench", Version: "1"}, &core.ServerOptions{
		CacheHints: map[string]core.CacheHint{"tools/list": {TTL: time.Hour, Scope: core.CacheScopePublic}},
	})
	core.AddTool(srv, &core.Tool{Name: "add"}, func(ctx context.Context, req *core.CallToolRequest, in addIn) (addOut, error) {
		return addOut{in.A + in.B}, nil
	})
	ts := httptest.NewServer(nethttp.Handler(srv))
	tb.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

func mcpfnConn(tb testing.TB, url string, mode client.Mode) *client.Conn {
	c, err := client.Connect(context.Background(), url, &client.Options{Mode: mode, NoGETStream: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

func gosdkSession(tb testing.TB, url string) *mcp.ClientSession {
	cl := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	s, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// TestSameAnswers: both clients get the same sum from the same server.
func TestSameAnswers(t *testing.T) {
	t.Parallel()
	url := server(t)
	ctx := context.Background()
	for _, mode := range []client.Mode{client.ModeModern, client.ModeLegacy} {
		var raw json.RawMessage
		r, err := mcpfnConn(t, url, mode).CallTool(ctx, "add", map[string]any{"a": 2, "b": 3}, &client.CallOptions{RawResult: &raw})
		// Legacy results of a typed tool carry the text form only.
		if err != nil || (mode == client.ModeModern && fmt.Sprintf("%s", r.StructuredContent) != `{"sum":5}`) ||
			!strings.Contains(string(raw), `{\"sum\":5}`) {
			t.Fatalf("mcpfn %v: %v %s", mode, err, raw)
		}
	}
	r, err := gosdkSession(t, url).CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}})
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := r.StructuredContent.(map[string]any); !ok || m["sum"] != float64(5) {
		t.Fatalf("go-sdk: %#v", r.StructuredContent)
	}
}

func BenchmarkCallTool(b *testing.B) {
	url := server(b)
	ctx := context.Background()
	args := map[string]any{"a": 2, "b": 3}
	for _, mode := range []client.Mode{client.ModeModern, client.ModeLegacy} {
		b.Run("mcpfn-"+mode.String(), func(b *testing.B) {
			c := mcpfnConn(b, url, mode)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.CallTool(ctx, "add", args, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("gosdk", func(b *testing.B) {
		s := gosdkSession(b, url)
		p := &mcp.CallToolParams{Name: "add", Arguments: args}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.CallTool(ctx, p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkListTools: mcpfn serves a fresh tools/list from its cache
// (ttlMs); go-sdk has no cache and asks the server every time.
func BenchmarkListTools(b *testing.B) {
	url := server(b)
	ctx := context.Background()
	b.Run("mcpfn-modern-cached", func(b *testing.B) {
		c := mcpfnConn(b, url, client.ModeModern)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.ListTools(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mcpfn-modern-uncached", func(b *testing.B) {
		c := mcpfnConn(b, url, client.ModeModern)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.ListTools(ctx, &client.CallOptions{Cache: client.CacheBypass}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gosdk", func(b *testing.B) {
		s := gosdkSession(b, url)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.ListTools(ctx, &mcp.ListToolsParams{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
