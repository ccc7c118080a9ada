package otel

import (
	"context"

	"go.opentelemetry.io/otel/metric"

	"github.com/mcpfn/mcpfn/core"
)

// MetricServerSessionDuration is the MCP conventions' histogram of legacy
// session lifetimes on the server, in seconds.
const MetricServerSessionDuration = "mcp.server.session.duration"

// SessionObserver returns a function for core.ServerOptions.OnSessionEnd
// that records mcp.server.session.duration, from initialize to the
// client's DELETE, with mcp.protocol.version, network.protocol.name "http"
// and network.transport "tcp", and the conventions' bucket boundaries.
// Sessions that expire or are evicted end inside the store and are not
// recorded (see core.ServerOptions.OnSessionEnd), nor is a session whose
// data has no start time. Without a MeterProvider it returns nil, which
// leaves OnSessionEnd unset. The returned function is safe for concurrent
// use.
func SessionObserver(opts Options) func(context.Context, core.SessionEnd) {
	if opts.MeterProvider == nil {
		return nil
	}
	h := opts.histogram(MetricServerSessionDuration, "The duration of the MCP session as observed on the MCP server.")
	return func(ctx context.Context, e core.SessionEnd) {
		if e.Started.IsZero() || !h.Enabled(ctx) {
			return
		}
		d := e.Ended.Sub(e.Started).Seconds()
		if d < 0 {
			d = 0
		}
		h.Record(ctx, d, metric.WithAttributes(
			KeyProtocolVersion.String(e.ProtocolVersion),
			KeyNetworkProtoName.String("http"),
			KeyNetworkTransport.String("tcp"),
		))
	}
}

// Instrument installs the server half on o: Middleware(opts) after the
// middleware o already lists (so it is the innermost, closest to the
// handler), and SessionObserver(opts) as OnSessionEnd, called after a
// function o already has there. It is the one call that instruments a
// server:
//
//	so := &core.ServerOptions{}
//	otel.Instrument(so, otel.Options{TracerProvider: tp, MeterProvider: mp})
//	srv := core.NewServer(impl, so)
func Instrument(o *core.ServerOptions, opts Options) {
	if opts.TracerProvider == nil && opts.MeterProvider == nil {
		return
	}
	o.Middleware = append(o.Middleware, Middleware(opts))
	obs := SessionObserver(opts)
	if obs == nil {
		return
	}
	if prev := o.OnSessionEnd; prev != nil {
		o.OnSessionEnd = func(ctx context.Context, e core.SessionEnd) { prev(ctx, e); obs(ctx, e) }
		return
	}
	o.OnSessionEnd = obs
}
