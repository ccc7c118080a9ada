package otel

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpfn/mcpfn/core"
)

// Middleware returns the server half: a core.Middleware (install it with
// core.ServerOptions.Middleware) that runs every round of every request in
// a span of kind SERVER named `{mcp.method.name} {target}` (the target is
// the tool or prompt name; other methods are named by the method alone),
// the handler's context carrying it, and records the round's duration in
// the mcp.server.operation.duration histogram.
//
// The span's parent is the trace context of the request's params._meta
// (traceparent, tracestate, baggage; MCP 2026-07-28 basic/index §_meta,
// SEP-414), read in every era; without one, the span already in the
// context (an HTTP instrumentation around the server), else the HTTP
// request's traceparent header. When the _meta parent is not that ambient
// transport context, the span links to the latter (the MCP conventions:
// one MCP request may span several HTTP requests and the reverse).
// Baggage from _meta, else from the header, is in the handler's context.
//
// Each round is its own span: a legacy request whose handler asks for
// input over the bridge runs one span per round, siblings under the same
// parent with mcpfn.round counting up; a 2026-07-28 input_required retry
// is a new request, whose span has the client's new round span as parent
// when the client propagates (ClientMiddleware does).
//
// Span attributes: mcp.method.name, mcp.protocol.version, mcp.session.id
// (legacy sessions; see Options.RawSessionID), jsonrpc.request.id,
// gen_ai.tool.name and gen_ai.operation.name "execute_tool" (tools/call),
// gen_ai.prompt.name (prompts/get), mcp.resource.uri (resources/read,
// subscribe, unsubscribe), mcpfn.round, network.protocol.name and
// .version, network.transport, client.address and client.port; on a
// JSON-RPC error rpc.response.status_code and error.type (the code, as a
// string) and status Error with the error's message (-32603 "Internal
// error" for an error that is not a *core.Error: its text is never
// recorded); on a tools/call result with isError, error.type "tool_error"
// and status Error. The histogram has the same attributes less the
// session, request id, resource URI, round and addresses (their
// cardinality is unbounded); on it, a method answered with -32601 (not
// served) is recorded as mcp.method.name "_OTHER", and a tool or prompt
// name becomes a value of its own only once a round of it ended in
// neither -32601 nor -32602, for at most 1000 names (then "_OTHER"), so
// that a client cannot grow the number of series with invented names.
//
// With neither provider set (the zero Options) it records nothing and
// returns the next Handler unchanged, so the chain costs what an empty one
// does. The returned Middleware is safe for concurrent use.
func Middleware(opts Options) core.Middleware {
	tr := opts.tracer()
	hist := opts.histogram(MetricServerOperationDuration,
		"MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent.")
	prop := opts.propagator()
	names := &targetNames{max: maxMetricTargets}
	sets := &setCache{}
	if opts.TracerProvider == nil && opts.MeterProvider == nil {
		// Nothing to record: the chain is left as it is.
		return func(next core.Handler) core.Handler { return next }
	}
	return func(next core.Handler) core.Handler {
		return func(ctx context.Context, c *core.Call) (out *core.Outcome, err error) {
			start := time.Now()
			pctx, link := serverParent(ctx, c, prop)

			var buf [16]attribute.KeyValue
			a := append(buf[:0], KeyMethodName.String(c.Method))
			if c.ProtocolVersion != "" {
				a = append(a, KeyProtocolVersion.String(c.ProtocolVersion))
			}
			if hr := c.HTTPRequest(); hr != nil {
				a = protoAttrs(a, hr.ProtoMajor, hr.ProtoMinor)
			}
			// a[:nMetric] are the histogram's attributes too, with the
			// target's, which are added once the outcome is known.
			nMetric := len(a)
			a = targetAttrs(a, c.Method, c.Target, false)
			if c.Target != "" && isResourceMethod(c.Method) {
				a = append(a, KeyResourceURI.String(c.Target))
			}
			if c.Session != nil {
				a = append(a, KeySessionID.String(opts.sessionID(c.Session.ID())))
			}
			if id := requestID(c.ID); id != "" {
				a = append(a, KeyJSONRPCRequestID.String(id))
			}
			if hr := c.HTTPRequest(); hr != nil && hr.RemoteAddr != "" {
				host, port := hostPort(hr.RemoteAddr)
				a = append(a, KeyClientAddress.String(host))
				if port != 0 {
					a = append(a, KeyClientPort.Int(port))
				}
			}
			so := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(a...)}
			if link.IsValid() {
				so = append(so, trace.WithLinks(trace.Link{SpanContext: link}))
			}
			sctx, span := tr.Start(pctx, spanName(c.Method, c.Target), so...)
			defer func() {
				if p := recover(); p != nil {
					// A panic below is answered by the server as a -32603; the
					// span still ends, and the panic goes on to the server.
					span.SetAttributes(KeyErrorType.String(strconv.Itoa(core.CodeInternalError)), KeyRPCStatusCode.String(strconv.Itoa(core.CodeInternalError)))
					span.SetStatus(codes.Error, "Internal error")
					span.End()
					panic(p)
				}
			}()

			out, err = next(sctx, c)

			end := make([]attribute.KeyValue, 0, 3)
			if c.Round != 0 {
				end = append(end, KeyRound.Int(c.Round))
			}
			var mbuf [maxMetricAttrs]attribute.KeyValue
			mattrs := append(mbuf[:0], a[:nMetric]...)
			cerr := core.CodeOf(err)
			if cerr == core.CodeMethodNotFound {
				// A method the server does not serve is a name the client
				// chose: one series for all of them.
				mattrs[0] = KeyMethodName.String("_OTHER")
			}
			// A name the client sent that the server refused as unknown
			// (or any -32602 of a name not yet seen) does not become a new
			// series: the histogram's cardinality stays bounded whatever
			// names a hostile client sends.
			admit := cerr != core.CodeInvalidParams && cerr != core.CodeMethodNotFound
			target := ""
			if c.Method == "tools/call" || c.Method == "prompts/get" {
				// Only the names the histogram records take a place in the
				// bounded set (a resource URI or completion ref does not).
				target = names.admit(c.Target, admit)
			}
			mattrs = targetAttrs(mattrs, c.Method, target, false)
			switch {
			case err != nil:
				code := strconv.Itoa(cerr)
				end = append(end, KeyErrorType.String(code), KeyRPCStatusCode.String(code))
				mattrs = append(mattrs, KeyErrorType.String(code), KeyRPCStatusCode.String(code))
				span.SetStatus(codes.Error, errorMessage(err))
			case out != nil && out.IsError:
				end = append(end, KeyErrorType.String("tool_error"))
				mattrs = append(mattrs, KeyErrorType.String("tool_error"))
				span.SetStatus(codes.Error, "tool_error")
			}
			span.SetAttributes(end...)
			span.End()
			if hist.Enabled(ctx) {
				hist.Record(ctx, time.Since(start).Seconds(), metric.WithAttributeSet(sets.set(mattrs)))
			}
			return out, err
		}
	}
}

// maxMetricTargets bounds the distinct tool and prompt names one
// Middleware records on its histogram; later names are recorded as
// "_OTHER" (the conventions' fallback value).
const maxMetricTargets = 1000

// targetNames is the set of tool and prompt names a Middleware's histogram
// has recorded, at most max.
type targetNames struct {
	seen sync.Map // string → struct{}
	mu   sync.Mutex
	n    int
	max  int
}

// admit returns name when it is known or, with add, becomes known within
// the bound; else "_OTHER". "" stays "".
func (t *targetNames) admit(name string, add bool) string {
	if name == "" {
		return ""
	}
	if _, ok := t.seen.Load(name); ok {
		return name
	}
	if !add {
		return "_OTHER"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.seen.Load(name); ok {
		return name
	}
	if t.n >= t.max {
		return "_OTHER"
	}
	t.seen.Store(name, struct{}{})
	t.n++
	return name
}

// errorMessage is the message of the JSON-RPC error err is answered with.
func errorMessage(err error) string {
	var e *core.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error"
}

// serverParent returns the context the server span starts in and the
// transport span context to link to (invalid: none).
func serverParent(ctx context.Context, c *core.Call, prop propagation.TextMapPropagator) (context.Context, trace.SpanContext) {
	pctx := ctx
	ambient := trace.SpanContextFromContext(ctx)
	if !ambient.IsValid() && hasPropagationHeader(c.Header) {
		pctx = prop.Extract(ctx, headerCarrier(c.Header))
		ambient = trace.SpanContextFromContext(pctx)
	}
	if len(c.Meta) == 0 {
		return pctx, trace.SpanContext{}
	}
	// Extracted over the transport's context: a _meta without baggage
	// keeps the header's.
	mctx := prop.Extract(pctx, metaCarrier{c})
	sc := trace.SpanContextFromContext(mctx)
	if ambient.IsValid() && sc.IsValid() && !sc.Equal(ambient) {
		return mctx, ambient
	}
	return mctx, trace.SpanContext{}
}

// hasPropagationHeader reports whether h has one of the W3C trace context
// or baggage headers, read without canonicalizing (http.Header keeps the
// canonical forms), so that a request without them costs no extraction.
// A custom Propagator's other headers are read when one of these is
// present.
func hasPropagationHeader(h http.Header) bool {
	return len(h["Traceparent"]) > 0 || len(h["Baggage"]) > 0
}

// metaCarrier reads the string members of the request's params._meta:
// the TextMapCarrier the propagator extracts from. Set is not used.
type metaCarrier struct{ c *core.Call }

func (m metaCarrier) Get(key string) string {
	v, _ := m.c.MetaString(key)
	return v
}

func (m metaCarrier) Set(string, string) {}

func (m metaCarrier) Keys() []string {
	var members map[string]json.RawMessage
	if json.Unmarshal(m.c.Meta, &members) != nil {
		return nil
	}
	keys := make([]string, 0, len(members))
	for k := range members {
		keys = append(keys, k)
	}
	return keys
}
