// Package otel instruments mcpfn servers and clients with OpenTelemetry:
// a span per MCP request round, the operation-duration histograms and the
// server's session-duration histogram of the OpenTelemetry semantic
// conventions for the Model Context Protocol
// (semantic-conventions-genai, docs/gen-ai/mcp.md), with the W3C trace
// context carried in params._meta (MCP 2026-07-28 basic/index §_meta,
// SEP-414) and in the HTTP headers.
//
// It is a module of its own, so that a user of the core module does not
// link OpenTelemetry. Install it with one call on each half:
//
//	opts := otel.Options{TracerProvider: tp, MeterProvider: mp}
//	so := &core.ServerOptions{}
//	otel.Instrument(so, opts) // Middleware and the session observer
//	srv := core.NewServer(impl, so)
//	c, err := client.Connect(ctx, url, &client.Options{Middleware: []client.Middleware{otel.ClientMiddleware(opts)}})
//
// Instrument adds Middleware (spans and mcp.server.operation.duration) and
// SessionObserver (mcp.server.session.duration of legacy sessions the
// client ends); either can be installed alone.
//
// On AWS Lambda (adapters/lambda), the server span is linked to the
// invocation's X-Ray trace, so that the trace joins AWS's view of it.
// Lambda freezes a sandbox between invocations: list the SDK's providers
// in lambda.Options.Flush (or deploy/lambdaenv's Options.Flush, with
// Middleware in Options.Middleware), which flushes them after each
// response and before the freeze.
// examples/otel wires it with the exporters the OTEL_* environment
// variables choose.
//
// It reads no global state: the tracer and meter providers and the
// propagator are those of Options (pass otel.GetTracerProvider() and the
// like from go.opentelemetry.io/otel to use the globals).
package otel

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/mcpfn/mcpfn/core"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/mcpfn/mcpfn/otel"

// Attribute keys of the MCP semantic conventions
// (https://github.com/open-telemetry/semantic-conventions-genai,
// docs/gen-ai/mcp.md). The go.opentelemetry.io/otel semconv packages
// defined the mcp.* keys up to v1.41.0 and dropped them from v1.42.0 on,
// when the conventions moved to the GenAI repository, so they are defined
// here.
const (
	KeyMethodName          = attribute.Key("mcp.method.name")
	KeyProtocolVersion     = attribute.Key("mcp.protocol.version")
	KeySessionID           = attribute.Key("mcp.session.id")
	KeyResourceURI         = attribute.Key("mcp.resource.uri")
	KeyJSONRPCRequestID    = attribute.Key("jsonrpc.request.id")
	KeyToolName            = attribute.Key("gen_ai.tool.name")
	KeyPromptName          = attribute.Key("gen_ai.prompt.name")
	KeyOperationName       = attribute.Key("gen_ai.operation.name")
	KeyErrorType           = attribute.Key("error.type")
	KeyRPCStatusCode       = attribute.Key("rpc.response.status_code")
	KeyNetworkProtoName    = attribute.Key("network.protocol.name")
	KeyNetworkProtoVersion = attribute.Key("network.protocol.version")
	KeyNetworkTransport    = attribute.Key("network.transport")
	KeyClientAddress       = attribute.Key("client.address")
	KeyClientPort          = attribute.Key("client.port")
	KeyServerAddress       = attribute.Key("server.address")
	KeyServerPort          = attribute.Key("server.port")
	// KeyRound is mcpfn's own attribute: the input round of the logical
	// call (core.Call.Round, client.Call.Round), set when not 0.
	KeyRound = attribute.Key("mcpfn.round")
	// KeyLinkType is mcpfn's own attribute of the server span's links:
	// "transport" (the HTTP request's trace context, when _meta gave
	// another parent), "xray" (the X-Amzn-Trace-Id header: on Lambda, the
	// invocation's segment) and "first_round" (a later legacy bridge
	// round's link to the first round of its call).
	KeyLinkType = attribute.Key("mcpfn.link.type")
)

// Metric names of the MCP semantic conventions, in seconds.
const (
	MetricServerOperationDuration = "mcp.server.operation.duration"
	MetricClientOperationDuration = "mcp.client.operation.duration"
)

// durationBuckets are the ExplicitBucketBoundaries the MCP conventions
// give both operation-duration histograms.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// Options configures Middleware and ClientMiddleware. The zero value
// records nothing and makes both middlewares the identity; with a provider
// set, the trace context and baggage are propagated with W3C Trace Context
// and W3C Baggage unless Propagator is set.
type Options struct {
	// TracerProvider makes the spans; nil: none are recorded.
	TracerProvider trace.TracerProvider
	// MeterProvider makes the histograms; nil: none are recorded.
	MeterProvider metric.MeterProvider
	// Propagator reads and writes the trace context in params._meta and
	// the HTTP headers; nil: W3C Trace Context and W3C Baggage.
	Propagator propagation.TextMapPropagator
	// RawSessionID records the legacy session id itself as mcp.session.id.
	// By default mcp.session.id is the first 16 hex digits of the id's
	// SHA-256, as the request record logs it: the id is a bearer credential
	// of the session (2025-11-25 basic/transports, session management) and
	// traces are read by more people than hold it.
	RawSessionID bool
	// IgnoreClientPropagation makes Middleware ignore the trace context
	// and baggage the client sends, for a deployment that does not trust
	// its clients: neither params._meta (traceparent, tracestate, baggage)
	// nor the traceparent and baggage headers are read, so a client can
	// neither choose the trace the server's spans join (nor their sampling,
	// through a parent-based sampler) nor put baggage in the handler's
	// context. The server span's parent is then a span the server's own
	// HTTP instrumentation started, if one is in the context, else none (a
	// new trace); a remote span context in the context (extracted from the
	// request by something around the server) is ignored too. Baggage
	// already in the context is left as it is. The X-Amzn-Trace-Id link
	// stays (on Lambda, adapters/lambda sets it to the invocation's trace
	// id): it is a link, never the parent.
	//
	// The default (false) is standard OpenTelemetry propagation: the
	// client's trace context is the parent and its baggage is in the
	// handler's context. ClientMiddleware does not read it.
	IgnoreClientPropagation bool
}

// instruments is what one middleware half records with, shared by its
// calls: the tracer, the operation-duration histogram, the propagator and
// the bounded target names and attribute sets of the histogram.
type instruments struct {
	opts    Options
	tr      trace.Tracer
	hist    metric.Float64Histogram
	prop    propagation.TextMapPropagator
	tools   targetNames // the tool names of the histogram, and their span names
	prompts targetNames
	sets    setCache
	start   []trace.SpanStartOption // the span kind, built once
}

// init sets up the instruments of a half whose spans are of kind and
// whose duration histogram is hist, described by desc.
func (in *instruments) init(opts Options, kind trace.SpanKind, hist, desc string) {
	in.opts = opts
	in.tr = opts.tracer()
	in.hist = opts.histogram(hist, desc)
	in.prop = opts.propagator()
	in.tools = targetNames{method: "tools/call", max: maxMetricTargets}
	in.prompts = targetNames{method: "prompts/get", max: maxMetricTargets}
	in.start = []trace.SpanStartOption{trace.WithSpanKind(kind)}
}

// names is the bounded name set of method's target, or nil.
func (in *instruments) names(method string) *targetNames {
	switch method {
	case "tools/call":
		return &in.tools
	case "prompts/get":
		return &in.prompts
	}
	return nil
}

func (o Options) tracer() trace.Tracer {
	tp := o.TracerProvider
	if tp == nil {
		tp = tracenoop.NewTracerProvider()
	}
	return tp.Tracer(ScopeName)
}

func (o Options) histogram(name, desc string) metric.Float64Histogram {
	mp := o.MeterProvider
	if mp == nil {
		mp = metricnoop.NewMeterProvider()
	}
	h, err := mp.Meter(ScopeName).Float64Histogram(name,
		metric.WithUnit("s"),
		metric.WithDescription(desc),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		// The name and options are constant and valid; a provider that
		// refuses them anyway gets no histogram rather than a panic.
		h, _ = metricnoop.NewMeterProvider().Meter(ScopeName).Float64Histogram(name)
	}
	return h
}

func (o Options) propagator() propagation.TextMapPropagator {
	if o.Propagator != nil {
		return o.Propagator
	}
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

func (o Options) sessionID(id string) string {
	if o.RawSessionID {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:8])
}

// spanName is `{mcp.method.name} {target}` with the tool or prompt name as
// target; the resource URI is left out of the name, as the conventions
// ask, to keep span names of low cardinality. The middlewares call it only
// for a target the server has (the server's Call.TargetFound, the client's
// admitted names): others are named by the method alone, so that invented
// names make no new span names.
func spanName(method, target string) string {
	switch method {
	case "tools/call", "prompts/get":
		if target != "" {
			return method + " " + core.Truncate(target, core.LogNameBytes)
		}
	}
	return method
}

// otherMethod is the span name and the histogram's mcp.method.name of a
// method the server does not serve, the conventions' fallback value: its
// name is the client's choice.
const otherMethod = "_OTHER"

// targetAttrs appends the attributes naming the target of method, the
// tool or prompt name cut to core.LogNameBytes and the resource URI to
// core.LogURIBytes (a client may send megabytes of either).
func targetAttrs(a []attribute.KeyValue, method, target string, withURI bool) []attribute.KeyValue {
	if target == "" {
		if method == "tools/call" {
			a = append(a, KeyOperationName.String("execute_tool"))
		}
		return a
	}
	switch method {
	case "tools/call":
		a = append(a, KeyToolName.String(core.Truncate(target, core.LogNameBytes)), KeyOperationName.String("execute_tool"))
	case "prompts/get":
		a = append(a, KeyPromptName.String(core.Truncate(target, core.LogNameBytes)))
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		if withURI {
			a = append(a, KeyResourceURI.String(core.Truncate(target, core.LogURIBytes)))
		}
	}
	return a
}

// requestID is the string form of a raw JSON-RPC id, cut to
// core.LogNameBytes (the id is the client's choice, a string or a number
// of any length): a string's value, a number's text; "" for null or
// absent (the conventions record neither).
func requestID(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return core.Truncate(s, core.LogNameBytes)
		}
		return ""
	}
	return core.Truncate(string(raw), core.LogNameBytes)
}

// protoAttrs appends network.protocol.name/version and network.transport
// of an HTTP request with protocol major.minor.
func protoAttrs(a []attribute.KeyValue, major, minor int) []attribute.KeyValue {
	a = append(a, KeyNetworkProtoName.String("http"))
	v := ""
	switch {
	case major == 1 && minor == 1:
		v = "1.1"
	case major == 1 && minor == 0:
		v = "1.0"
	case major == 2:
		v = "2"
	case major == 3:
		v = "3"
	case major > 0:
		v = strconv.Itoa(major) + "." + strconv.Itoa(minor)
	}
	if v != "" {
		a = append(a, KeyNetworkProtoVersion.String(v))
	}
	if major == 3 {
		return append(a, KeyNetworkTransport.String("quic"))
	}
	return append(a, KeyNetworkTransport.String("tcp"))
}

// codeString is the decimal text of a JSON-RPC error code, without
// building it for the codes the server answers with.
func codeString(code int) string {
	switch code {
	case -32700:
		return "-32700"
	case -32600:
		return "-32600"
	case -32601:
		return "-32601"
	case -32602:
		return "-32602"
	case -32603:
		return "-32603"
	}
	return strconv.Itoa(code)
}

// hostPort splits an address into host and port (0 when absent).
func hostPort(addr string) (string, int) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, 0
	}
	p, _ := strconv.Atoi(port)
	return host, p
}

// headerCarrier is propagation.HeaderCarrier over a possibly nil header.
func headerCarrier(h http.Header) propagation.HeaderCarrier {
	if h == nil {
		h = http.Header{}
	}
	return propagation.HeaderCarrier(h)
}

// maxMetricAttrs is the most attributes a histogram point of this package
// has: method, version, network name, version and transport, tool or
// prompt name, operation name, error.type, status code (the client: server
// address and port instead of the network version).
const maxMetricAttrs = 11

// setKey is the attributes of a histogram point, in the order they were
// added; comparable, so a map key that costs no allocation to look up.
type setKey [maxMetricAttrs]attribute.KeyValue

// setCache keeps the record options (the attribute.Set) of each distinct
// histogram point, so that recording a known one builds nothing. It holds
// at most maxCachedSets (the names in a point are bounded already; the
// bound is a second guard), past which they are built per recording.
type setCache struct {
	mu sync.RWMutex
	m  map[setKey][]metric.RecordOption
}

const maxCachedSets = 4096

// opts returns the record options of the point whose attributes are
// k[:n].
func (sc *setCache) opts(k *setKey, n int) []metric.RecordOption {
	sc.mu.RLock()
	o, ok := sc.m[*k]
	sc.mu.RUnlock()
	if ok {
		return o
	}
	key := *k // NewSet sorts the attributes in place
	o = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(k[:n]...))}
	sc.mu.Lock()
	if sc.m == nil {
		sc.m = map[setKey][]metric.RecordOption{}
	}
	if len(sc.m) < maxCachedSets {
		sc.m[key] = o
	}
	sc.mu.Unlock()
	return o
}
