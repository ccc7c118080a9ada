package otel_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/otel"
)

// discardWriter is an http.ResponseWriter that keeps the status and the
// body of the last response.
type discardWriter struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (w *discardWriter) Header() http.Header {
	if w.h == nil {
		w.h = http.Header{}
	}
	return w.h
}
func (w *discardWriter) WriteHeader(s int)           { w.status = s }
func (w *discardWriter) Write(b []byte) (int, error) { return w.body.Write(b) }
func (w *discardWriter) Flush()                      {}
func (w *discardWriter) reset() {
	clear(w.h)
	w.status = 0
	w.body.Reset()
}

// noopExporter drops the spans the batcher hands it.
type noopExporter struct{}

func (noopExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (noopExporter) Shutdown(context.Context) error                             { return nil }

func addServer(mw []core.Middleware) *core.Server {
	srv := core.NewServer(core.Implementation{Name: "bench", Version: "1"}, &core.ServerOptions{
		Mode: core.ModeModern, DisableRequestLog: true, Logger: slog.New(slog.DiscardHandler), Middleware: mw,
	})
	core.AddTool(srv, &core.Tool{Name: "add"}, func(ctx context.Context, req *core.CallToolRequest, in struct {
		A int `json:"a"`
		B int `json:"b"`
	}) (int, error) {
		return in.A + in.B, nil
	})
	return srv
}

// capturedCall is the HTTP request of a real client's 2026-07-28
// tools/call add, captured on loopback once.
func capturedCall(b *testing.B) (http.Header, []byte) {
	b.Helper()
	srv := addServer(nil)
	var mu sync.Mutex
	var hdr http.Header
	var body []byte
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		if r.Header.Get("Mcp-Method") == "tools/call" {
			mu.Lock()
			hdr, body = r.Header.Clone(), raw
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(raw))
		nethttp.Handler(srv).ServeHTTP(w, r)
	}))
	defer ts.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, ts.URL+nethttp.DefaultPath, &client.Options{Mode: client.ModeModern, NoGETStream: true})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallTool(ctx, "add", map[string]any{"a": 40, "b": 2}); err != nil {
		b.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if body == nil {
		b.Fatal("no tools/call captured")
	}
	return hdr, body
}

// BenchmarkDispatchToolsCall serves a real client's tools/call add
// through Server.ServeHTTP (no network): without middleware, with the otel
// Middleware on no-op providers (the zero Options), and on the real SDK
// with a batcher to an exporter that drops the spans and a meter whose
// reader is never collected.
func BenchmarkDispatchToolsCall(b *testing.B) {
	hdr, body := capturedCall(b)
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(noopExporter{}))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	for _, c := range []struct {
		name string
		mw   []core.Middleware
	}{
		{"none", nil},
		{"otel-noop", []core.Middleware{otel.Middleware(otel.Options{})}},
		{"otel-sdk", []core.Middleware{otel.Middleware(otel.Options{TracerProvider: tp, MeterProvider: mp})}},
	} {
		b.Run(c.name, func(b *testing.B) {
			srv := addServer(c.mw)
			rd := bytes.NewReader(body)
			req := httptest.NewRequest(http.MethodPost, nethttp.DefaultPath, rd)
			req.Header = hdr
			w := &discardWriter{}
			serve := func() {
				rd.Reset(body)
				req.Body = io.NopCloser(rd)
				w.reset()
				srv.ServeHTTP(w, req)
			}
			serve()
			if w.status != 0 && w.status != http.StatusOK || !bytes.Contains(w.body.Bytes(), []byte(`"text":"42"`)) {
				b.Fatalf("HTTP %d %s", w.status, w.body.Bytes())
			}
			b.ReportAllocs()
			for b.Loop() {
				serve()
			}
		})
	}
}
