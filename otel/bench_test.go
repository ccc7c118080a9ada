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

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/callbench"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/otel"
)

// noopExporter drops the spans the batcher hands it.
type noopExporter struct{}

func (noopExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (noopExporter) Shutdown(context.Context) error                             { return nil }

func addServer(mode core.Mode, mw []core.Middleware) *core.Server {
	srv := core.NewServer(core.Implementation{Name: "bench", Version: "1"}, &core.ServerOptions{
		Mode: mode, DisableRequestLog: true, Logger: slog.New(slog.DiscardHandler), Middleware: mw,
	})
	core.AddTool(srv, &core.Tool{Name: "add"}, func(ctx context.Context, req *core.CallToolRequest, in struct {
		A int `json:"a"`
		B int `json:"b"`
	}) (int, error) {
		return in.A + in.B, nil
	})
	return srv
}

// benchProviders returns the real SDK's providers, shut down when the
// benchmark ends: tp batches to an exporter that drops the spans, never
// does too with a sampler that never samples, and mp's reader is never
// collected.
func benchProviders(b *testing.B) (tp, never *sdktrace.TracerProvider, mp *sdkmetric.MeterProvider) {
	tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(noopExporter{}))
	never = sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()), sdktrace.WithBatcher(noopExporter{}))
	mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = never.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	return tp, never, mp
}

// capturedCall is the HTTP request of a real client's 2026-07-28
// tools/call add, captured on loopback once.
func capturedCall(b *testing.B) (http.Header, []byte) {
	b.Helper()
	srv := addServer(core.ModeModern, nil)
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
	if _, err := c.CallTool(ctx, "add", map[string]any{"a": 40, "b": 2}, nil); err != nil {
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
// through Server.ServeHTTP (no network), with mw= one of:
//
//	none        no middleware
//	pass        one middleware that only calls next (the chain's cost)
//	otel-zero   the otel Middleware with the zero Options (the identity)
//	otel-noop   the otel Middleware on the trace/noop and metric/noop providers
//	otel-never  the real SDK with a sampler that never samples, and the SDK meter
//	otel-sdk    the real SDK: a batcher to an exporter that drops the spans, and
//	            a meter whose reader is never collected
//	floor       not the otel Middleware: one bare SERVER span of the same SDK
//	            tracer per request, no attribute, no metric (what the SDK costs)
//
// Compare with benchstat -col /mw.
func BenchmarkDispatchToolsCall(b *testing.B) {
	hdr, body := capturedCall(b)
	tp, never, mp := benchProviders(b)
	pass := func(next core.Handler) core.Handler {
		return func(ctx context.Context, c *core.Call) (*core.Outcome, error) { return next(ctx, c) }
	}
	floorTracer := tp.Tracer("floor")
	floor := func(next core.Handler) core.Handler {
		return func(ctx context.Context, c *core.Call) (*core.Outcome, error) {
			ctx, span := floorTracer.Start(ctx, "tools/call add", trace.WithSpanKind(trace.SpanKindServer))
			defer span.End()
			return next(ctx, c)
		}
	}
	for _, c := range []struct {
		name string
		mw   []core.Middleware
	}{
		{"none", nil},
		{"pass", []core.Middleware{pass}},
		{"otel-zero", []core.Middleware{otel.Middleware(otel.Options{})}},
		{"otel-noop", []core.Middleware{otel.Middleware(otel.Options{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider()})}},
		{"otel-never", []core.Middleware{otel.Middleware(otel.Options{TracerProvider: never, MeterProvider: mp})}},
		{"otel-sdk", []core.Middleware{otel.Middleware(otel.Options{TracerProvider: tp, MeterProvider: mp})}},
		{"floor", []core.Middleware{floor}},
	} {
		b.Run("mw="+c.name, func(b *testing.B) {
			srv := addServer(core.ModeModern, c.mw)
			rd := bytes.NewReader(body)
			req := httptest.NewRequest(http.MethodPost, nethttp.DefaultPath, rd)
			req.Header = hdr
			w := &mcptest.DiscardWriter{}
			serve := func() {
				rd.Reset(body)
				req.Body = io.NopCloser(rd)
				w.Reset()
				srv.ServeHTTP(w, req)
			}
			serve()
			if w.Status != 0 && w.Status != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"text":"42"`)) {
				b.Fatalf("HTTP %d %s", w.Status, w.Body.Bytes())
			}
			callbench.Loop(b, serve)
		})
	}
}

// BenchmarkCallTool: a real client's tools/call add round trip over
// loopback to a real server (no middleware on it), per era, with the
// client's ClientMiddleware as mw= none, otel-zero, otel-noop (the no-op
// providers), otel-never (a sampler that never samples) and otel-sdk (a
// batcher to a dropping exporter and an uncollected meter). Compare with
// benchstat -col /mw.
func BenchmarkCallTool(b *testing.B) {
	ts := httptest.NewServer(nethttp.Handler(addServer(core.ModeAuto, nil)))
	b.Cleanup(ts.Close)
	tp, never, mp := benchProviders(b)
	for _, mode := range []client.Mode{client.ModeModern, client.ModeLegacy} {
		for _, c := range []struct {
			name string
			mw   []client.Middleware
		}{
			{"none", nil},
			{"otel-zero", []client.Middleware{otel.ClientMiddleware(otel.Options{})}},
			{"otel-noop", []client.Middleware{otel.ClientMiddleware(otel.Options{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider()})}},
			{"otel-never", []client.Middleware{otel.ClientMiddleware(otel.Options{TracerProvider: never, MeterProvider: mp})}},
			{"otel-sdk", []client.Middleware{otel.ClientMiddleware(otel.Options{TracerProvider: tp, MeterProvider: mp})}},
		} {
			b.Run("mode="+mode.String()+"/mw="+c.name, func(b *testing.B) {
				callbench.CallAdd(b, ts.URL+nethttp.DefaultPath, &client.Options{Mode: mode, NoGETStream: true, Middleware: c.mw})
			})
		}
	}
}
