package otel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
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
// Span names have a bounded number of values whatever names clients
// invent: a tool or prompt the server does not have (core.Call.TargetFound)
// is named by the method alone ("tools/call"), and a method the server
// does not serve (core.Call.Served; legacy requests only) is "_OTHER". A
// tool only ListToolsHandler lists is found by the call: its span starts
// as "tools/call" and is renamed when the round ends. The names asked for
// are still the span's gen_ai.tool.name, gen_ai.prompt.name and
// mcp.method.name. Every string the client chose is cut
// (core.Truncate): mcp.method.name, the tool and prompt names and
// jsonrpc.request.id to core.LogNameBytes (256), mcp.resource.uri to
// core.LogURIBytes (1024), the status description to core.LogErrorBytes
// (2048).
//
// The span's parent is the trace context of the request's params._meta
// (traceparent, tracestate, baggage; MCP 2026-07-28 basic/index §_meta,
// SEP-414), read in every era; without one, the span already in the
// context (an HTTP instrumentation around the server), else the HTTP
// request's traceparent header. When the _meta parent is not that ambient
// transport context, the span links to the latter (the MCP conventions:
// one MCP request may span several HTTP requests and the reverse).
// Baggage from _meta, else from the header, is in the handler's context.
// With Options.IgnoreClientPropagation none of the client's is read: the
// parent is the server's own span already in the context, else none.
// An X-Amzn-Trace-Id header with a Root and a Parent (AWS X-Ray; on
// Lambda, adapters/lambda sets it to the invocation's trace id) is a link
// too, so that the trace joins AWS's view of the invocation; it is never
// the parent. Links carry mcpfn.link.type "transport", "xray" or
// "first_round".
//
// Each round is its own span: a legacy request whose handler asks for
// input over the bridge runs one span per round, siblings under the same
// parent with mcpfn.round counting up, each later round linked to the
// first (link type first_round); a 2026-07-28 input_required retry is a
// new request, whose span has the client's new round span as parent when
// the client propagates (ClientMiddleware does), the client's round spans
// being siblings under the caller's span.
//
// A sampler sees the span's name (for a tool only ListToolsHandler lists,
// "tools/call"), kind, parent and links; the attributes are set when the
// round ends, and only on a span that records.
//
// Span attributes: mcp.method.name, mcp.protocol.version, mcp.session.id
// (legacy sessions; see Options.RawSessionID), jsonrpc.request.id,
// gen_ai.tool.name and gen_ai.operation.name "execute_tool" (tools/call),
// gen_ai.prompt.name (prompts/get), mcp.resource.uri (resources/read,
// subscribe, unsubscribe), mcpfn.round, network.protocol.name and
// .version, network.transport, client.address and client.port; on a
// JSON-RPC error rpc.response.status_code and error.type (the code, as a
// string), and for -32603 and the -32000 to -32099 server errors status
// Error with the error's message (-32603 "Internal error" for an error
// that is not a *core.Error: its text is never recorded; the other codes
// are the client's fault and leave the status Unset, as the conventions
// say); on a tools/call result with isError, error.type "tool_error" and
// status Error. The histogram has the same attributes less the
// session, request id, resource URI, round and addresses (their
// cardinality is unbounded); on it, a method answered with -32601 (not
// served) is recorded as mcp.method.name "_OTHER", and a tool or prompt
// name is a value of its own only when the server has it
// (core.Call.TargetFound), for at most 1000 tool and 1000 prompt names
// (then "_OTHER"), so that a client cannot grow the number of series with
// invented names.
//
// A panic below the middleware (in a later middleware: the server recovers
// a handler's panic itself, as a -32603 error) ends the span and records
// the point as a -32603, and goes on to the server, which answers -32603.
//
// With neither provider set (the zero Options) it records nothing and
// returns the next Handler unchanged, so the chain costs what an empty one
// does. The returned Middleware is safe for concurrent use.
func Middleware(opts Options) core.Middleware {
	if opts.TracerProvider == nil && opts.MeterProvider == nil {
		// Nothing to record: the chain is left as it is.
		return func(next core.Handler) core.Handler { return next }
	}
	m := &serverMW{}
	m.init(opts, trace.SpanKindServer, MetricServerOperationDuration,
		"MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent.")
	return func(next core.Handler) core.Handler {
		return func(ctx context.Context, c *core.Call) (*core.Outcome, error) { return m.serve(ctx, c, next) }
	}
}

// serverMW is the state of one Middleware, shared by its calls.
type serverMW struct {
	instruments
	rounds roundLinks
}

// linkType is the attributes of a span link of type t (KeyLinkType).
func linkType(t string) []attribute.KeyValue {
	return []attribute.KeyValue{KeyLinkType.String(t)}
}

// asked reports whether a round ended asking the client for input.
func asked(out *core.Outcome, err error) bool {
	return err == nil && out != nil && out.InputRequired
}

func (m *serverMW) serve(ctx context.Context, c *core.Call, next core.Handler) (out *core.Outcome, err error) {
	start := time.Now()
	var pctx context.Context
	var link trace.SpanContext
	if m.opts.IgnoreClientPropagation {
		pctx = ownParent(ctx)
	} else {
		pctx, link = serverParent(ctx, c, m.prop, m.opts.Propagator == nil)
	}
	names := m.names(c.Method)
	so := m.start
	xray, hasXRay := xrayLink(c.Header)
	// A later round of a legacy bridge call links to its first round.
	var first trace.SpanContext
	legacy := !c.Modern()
	if legacy && c.Round > 0 {
		first, _ = m.rounds.first(c)
	}
	if link.IsValid() || hasXRay || first.IsValid() {
		so = append(make([]trace.SpanStartOption, 0, 4), so[0])
		if link.IsValid() {
			so = append(so, trace.WithLinks(trace.Link{SpanContext: link, Attributes: linkType("transport")}))
		}
		if hasXRay {
			so = append(so, trace.WithLinks(trace.Link{SpanContext: xray, Attributes: linkType("xray")}))
		}
		if first.IsValid() {
			so = append(so, trace.WithLinks(trace.Link{SpanContext: first, Attributes: linkType("first_round")}))
		}
	}
	// Samplers see the name (method and tool or prompt), the kind and the
	// parent; the attributes are set once the round has ended, and only
	// on a span that records, so that a span dropped by the sampler (or a
	// no-op provider's) costs no attribute.
	name, named := serverSpanName(c, names)
	sctx, span := m.tr.Start(pctx, name, so...)
	defer func() {
		if p := recover(); p != nil {
			// A panic below is answered by the server as a -32603; the
			// span still ends as one, the histogram gets its point, and the
			// panic goes on to the server.
			if span.IsRecording() {
				span.SetAttributes(m.spanAttrs(c, core.CodeInternalError, false)...)
				span.SetStatus(codes.Error, "Internal error")
			}
			span.End()
			if m.hist.Enabled(ctx) {
				m.hist.Record(ctx, time.Since(start).Seconds(), m.metricOpts(c, names, core.CodeInternalError, false)...)
			}
			panic(p)
		}
	}()

	out, err = next(sctx, c)

	code := 0
	if err != nil {
		code = core.CodeOf(err)
	}
	isError := err == nil && out != nil && out.IsError
	if span.IsRecording() {
		if !named && c.TargetFound() {
			// A tool only ListToolsHandler lists: the call found it.
			span.SetName(names.spanName(c.Method, c.Target))
		}
		span.SetAttributes(m.spanAttrs(c, code, isError)...)
		switch {
		case err != nil && serverFault(code):
			span.SetStatus(codes.Error, core.Truncate(errorMessage(err), core.LogErrorBytes))
		case isError:
			span.SetStatus(codes.Error, "tool_error")
		}
	}
	span.End()
	if legacy && (c.Round > 0 || asked(out, err)) {
		m.rounds.ended(c, span.SpanContext(), asked(out, err))
	}
	if m.hist.Enabled(ctx) {
		m.hist.Record(ctx, time.Since(start).Seconds(), m.metricOpts(c, names, code, isError)...)
	}
	return out, err
}

// maxSpanAttrs is the most attributes a server span has: method, version,
// the three network ones, tool or prompt name and operation name (or the
// URI), session, request id, client address and port, round, error.type
// and status code.
const maxSpanAttrs = 16

// spanAttrs returns the span's attributes in a slice of their exact
// length (the span copies them; the array they are built in stays on
// the stack).
func (m *serverMW) spanAttrs(c *core.Call, code int, isError bool) []attribute.KeyValue {
	var buf [maxSpanAttrs]attribute.KeyValue
	// A method the server does not serve is the client's string, named
	// "_OTHER" in the span's name and cut here (core.Truncate).
	a := append(buf[:0], KeyMethodName.String(core.Truncate(c.Method, core.LogNameBytes)))
	if c.ProtocolVersion != "" {
		a = append(a, KeyProtocolVersion.String(core.Truncate(c.ProtocolVersion, core.LogNameBytes)))
	}
	hr := c.HTTPRequest()
	if hr != nil {
		a = protoAttrs(a, hr.ProtoMajor, hr.ProtoMinor)
	}
	a = targetAttrs(a, c.Method, c.Target, true)
	if c.Session != nil {
		a = append(a, KeySessionID.String(m.opts.sessionID(c.Session.ID())))
	}
	if id := requestID(c.ID); id != "" {
		a = append(a, KeyJSONRPCRequestID.String(id))
	}
	if hr != nil && hr.RemoteAddr != "" {
		host, port := hostPort(hr.RemoteAddr)
		a = append(a, KeyClientAddress.String(host))
		if port != 0 {
			a = append(a, KeyClientPort.Int(port))
		}
	}
	if c.Round != 0 {
		a = append(a, KeyRound.Int(c.Round))
	}
	a = errorAttrs(a, code, isError)
	return slices.Clone(a)
}

// metricOpts returns the record options of the round's histogram point:
// its attribute set, cached per distinct point.
func (m *serverMW) metricOpts(c *core.Call, names *targetNames, code int, isError bool) []metric.RecordOption {
	var k setKey
	a := append(k[:0], KeyMethodName.String(c.Method))
	if code == core.CodeMethodNotFound || !c.Served() {
		// A method the server does not serve is a name the client chose:
		// one series for all of them.
		a[0] = KeyMethodName.String(otherMethod)
	}
	if c.ProtocolVersion != "" {
		a = append(a, KeyProtocolVersion.String(core.Truncate(c.ProtocolVersion, core.LogNameBytes)))
	}
	if hr := c.HTTPRequest(); hr != nil {
		a = protoAttrs(a, hr.ProtoMajor, hr.ProtoMinor)
	}
	// A name the server does not have (Call.TargetFound) does not become a
	// new series: the histogram's cardinality stays bounded whatever names
	// a hostile client sends. Only tool and prompt names take a place in
	// the bounded sets (a resource URI or completion ref does not).
	target := ""
	if names != nil {
		target = names.admit(c.Target, c.TargetFound())
	}
	a = targetAttrs(a, c.Method, target, false)
	a = errorAttrs(a, code, isError)
	return m.sets.opts(&k, len(a))
}

// errorAttrs appends error.type and rpc.response.status_code of a round
// answered with the JSON-RPC error code (0: none), or error.type
// "tool_error" of an isError result.
func errorAttrs(a []attribute.KeyValue, code int, isError bool) []attribute.KeyValue {
	switch {
	case code != 0:
		cs := codeString(code)
		a = append(a, KeyErrorType.String(cs), KeyRPCStatusCode.String(cs))
	case isError:
		a = append(a, KeyErrorType.String("tool_error"))
	}
	return a
}

// maxMetricTargets bounds the distinct tool names and the distinct prompt
// names one Middleware records on its histogram; later names are recorded
// as "_OTHER" (the conventions' fallback value).
const maxMetricTargets = 1000

// targetNames is the set of names (tool or prompt names of method) a
// histogram has recorded, at most max, with the span name of each, so
// that a known target's span name is not built per request.
type targetNames struct {
	method string
	max    int
	mu     sync.RWMutex
	names  map[string]string // name → span name
}

// spanName is `{method} {name}` (cached for a known name); method alone
// when name is "" or t is nil (a method whose target is not in the span
// name). It is called for names the server has (or, on the client, has
// answered), never for one a client invented.
func (t *targetNames) spanName(method, name string) string {
	if t == nil || name == "" {
		return method
	}
	if s, ok := t.known(name); ok {
		return s
	}
	return spanName(method, name)
}

// known returns the cached span name of a known name.
func (t *targetNames) known(name string) (string, bool) {
	if t == nil || name == "" {
		return "", false
	}
	t.mu.RLock()
	s, ok := t.names[name]
	t.mu.RUnlock()
	return s, ok
}

// serverSpanName is the name of the server span of c, and whether it is
// final: `{method} {target}` for a target the server has, the method
// alone for a target it does not have (yet: a tool only ListToolsHandler
// lists is found by the call, and the span is renamed then), and "_OTHER"
// for a method it does not serve, so that names a client invents make no
// new span names.
func serverSpanName(c *core.Call, names *targetNames) (string, bool) {
	switch {
	case !c.Served():
		return otherMethod, true
	case names == nil || c.Target == "":
		return c.Method, true
	case c.TargetFound():
		return names.spanName(c.Method, c.Target), true
	}
	return c.Method, false
}

// admit returns name when it is known or, with add, becomes known within
// the bound; else "_OTHER". "" stays "".
func (t *targetNames) admit(name string, add bool) string {
	if name == "" {
		return ""
	}
	t.mu.RLock()
	_, ok := t.names[name]
	t.mu.RUnlock()
	if ok {
		return name
	}
	if !add {
		return "_OTHER"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.names[name]; ok {
		return name
	}
	if len(t.names) >= t.max {
		return "_OTHER"
	}
	if t.names == nil {
		t.names = map[string]string{}
	}
	t.names[name] = spanName(t.method, name)
	return name
}

// serverFault reports whether a JSON-RPC error code makes the server
// span's status Error: the MCP conventions (server span,
// rpc.response.status_code) count -32603 and the -32000 to -32099 range
// as errors; the others (-32602 an unknown tool, -32601, -32600) are the
// client's and leave the status Unset, error.type still saying what
// happened.
func serverFault(code int) bool {
	return code == core.CodeInternalError || code <= -32000 && code >= -32099
}

// errorMessage is the message of the JSON-RPC error err is answered with.
func errorMessage(err error) string {
	var e *core.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error"
}

// ownParent is the context the server span starts in when the client's
// trace context is ignored (Options.IgnoreClientPropagation): ctx, unless
// its span context is a remote one (extracted from the request by
// something around the server), which is dropped: the span is then a new
// root.
func ownParent(ctx context.Context) context.Context {
	if trace.SpanContextFromContext(ctx).IsRemote() {
		return trace.ContextWithSpanContext(ctx, trace.SpanContext{})
	}
	return ctx
}

// serverParent returns the context the server span starts in and the
// transport span context to link to (invalid: none).
//
// With the default propagator (W3C Trace Context and Baggage), a _meta
// that holds neither member name and no escape is not extracted from.
func serverParent(ctx context.Context, c *core.Call, prop propagation.TextMapPropagator, w3c bool) (context.Context, trace.SpanContext) {
	pctx := ctx
	ambient := trace.SpanContextFromContext(ctx)
	if !ambient.IsValid() && hasPropagationHeader(c.Header) {
		pctx = prop.Extract(ctx, headerCarrier(c.Header))
		ambient = trace.SpanContextFromContext(pctx)
	}
	if len(c.Meta) == 0 || w3c && !mayHoldW3C(c.Meta) {
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

// mayHoldW3C reports whether a raw _meta object may have a traceparent,
// tracestate or baggage member: it names one, or has an escape that could
// spell one.
func mayHoldW3C(meta []byte) bool {
	return bytes.Contains(meta, []byte(`"traceparent"`)) || bytes.Contains(meta, []byte(`"baggage"`)) ||
		bytes.Contains(meta, []byte(`\`))
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
