package otel

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/mcp"
)

// ClientMiddleware returns the client half: a client.Middleware (install
// it with client.Options.Middleware) that sends every Call in a span of
// kind CLIENT named `{mcp.method.name} {target}`, a child of the caller's
// context, injects that span's trace context (and the context's baggage)
// into the request's params._meta (traceparent, tracestate, baggage; MCP
// 2026-07-28 basic/index §_meta, SEP-414; sent in every era) and its HTTP
// headers, and records the Call's duration in the
// mcp.client.operation.duration histogram.
//
// Each 2026-07-28 input_required round is a Call of its own, so a span of
// its own, a sibling of the other rounds under the caller's span, with
// mcpfn.round counting up; the server's span of each round is that round's
// child.
//
// Span attributes: mcp.method.name, mcp.protocol.version, mcp.session.id
// (legacy sessions; see Options.RawSessionID), gen_ai.tool.name and
// gen_ai.operation.name "execute_tool" (tools/call), gen_ai.prompt.name
// (prompts/get), mcp.resource.uri (resources/read, subscribe,
// unsubscribe), mcpfn.round, server.address, server.port,
// network.protocol.name "http", network.transport "tcp"; on a JSON-RPC
// error rpc.response.status_code and error.type (the code) and status
// Error with the error's message; on an HTTP status without a JSON-RPC
// error, error.type the status code; on a deadline, "timeout"; on any
// other failure "_OTHER"; on a tools/call result with isError, error.type
// "tool_error". The histogram has the same attributes less the session,
// the resource URI and the round. jsonrpc.request.id is not recorded: the
// client assigns the id after the middleware runs.
//
// With neither provider set (the zero Options) it records and injects
// nothing and returns the next Handler unchanged. The returned Middleware
// is safe for concurrent use.
func ClientMiddleware(opts Options) client.Middleware {
	tr := opts.tracer()
	hist := opts.histogram(MetricClientOperationDuration,
		"The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received.")
	prop := opts.propagator()
	if opts.TracerProvider == nil && opts.MeterProvider == nil {
		// Nothing to record: the chain is left as it is.
		return func(next client.Handler) client.Handler { return next }
	}
	return func(next client.Handler) client.Handler {
		return func(ctx context.Context, c *client.Call) (*client.Outcome, error) {
			start := time.Now()
			var buf [16]attribute.KeyValue
			a := append(buf[:0], KeyMethodName.String(c.Method))
			if c.Version != "" {
				a = append(a, KeyProtocolVersion.String(c.Version))
			}
			a = targetAttrs(a, c.Method, c.Target, false)
			a = append(a, KeyNetworkProtoName.String("http"), KeyNetworkTransport.String("tcp"))
			if u, err := url.Parse(c.URL); err == nil && u.Hostname() != "" {
				a = append(a, KeyServerAddress.String(u.Hostname()))
				port, _ := strconv.Atoi(u.Port())
				switch {
				case port != 0:
				case u.Scheme == "https":
					port = 443
				case u.Scheme == "http":
					port = 80
				}
				if port != 0 {
					a = append(a, KeyServerPort.Int(port))
				}
			}
			nMetric := len(a)
			if c.Target != "" && isResourceMethod(c.Method) {
				a = append(a, KeyResourceURI.String(c.Target))
			}
			if c.SessionID != "" {
				a = append(a, KeySessionID.String(opts.sessionID(c.SessionID)))
			}
			if c.Round != 0 {
				a = append(a, KeyRound.Int(c.Round))
			}
			sctx, span := tr.Start(ctx, spanName(c.Method, c.Target),
				trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(a...))
			defer span.End()

			inj := propagation.MapCarrier{}
			prop.Inject(sctx, inj)
			for k, v := range inj {
				c.SetMeta(k, v)
				c.SetHeader(k, v)
			}

			out, err := next(sctx, c)

			mattrs := append([]attribute.KeyValue(nil), a[:nMetric]...)
			if et, code := clientErrorType(err, out); et != "" {
				end := []attribute.KeyValue{KeyErrorType.String(et)}
				if code != "" {
					end = append(end, KeyRPCStatusCode.String(code))
				}
				span.SetAttributes(end...)
				mattrs = append(mattrs, end...)
				span.SetStatus(codes.Error, clientErrorMessage(err, et))
			}
			if hist.Enabled(ctx) {
				hist.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(mattrs...))
			}
			return out, err
		}
	}
}

// clientErrorType is error.type of a Call that ended with err or out, and
// the JSON-RPC code (rpc.response.status_code) when there is one.
func clientErrorType(err error, out *client.Outcome) (errorType, code string) {
	var me *mcp.Error
	var he *client.HTTPError
	switch {
	case err == nil:
		if out != nil && out.IsError {
			return "tool_error", ""
		}
		return "", ""
	case errors.As(err, &me):
		code := strconv.Itoa(me.Code)
		return code, code
	case errors.As(err, &he):
		return strconv.Itoa(he.StatusCode), ""
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout", ""
	}
	return "_OTHER", ""
}

// clientErrorMessage is the span status description: the JSON-RPC error's
// message when there is one (the conventions), else the error type; the
// text of other errors may hold URLs and is not recorded.
func clientErrorMessage(err error, errorType string) string {
	var me *mcp.Error
	if errors.As(err, &me) {
		return me.Message
	}
	return errorType
}
