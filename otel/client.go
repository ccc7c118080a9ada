package otel

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
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
// the resource URI and the round; on it, a tool or prompt name becomes a
// value of its own only once a Call of it ended in neither -32601 nor
// -32602, for at most 1000 names of each (then "_OTHER"), as on the
// server, since a program may forward a model's choice of name. For the
// same reason the span is named after a tool or prompt only once it is
// such a value: a Call of a name not yet answered starts as
// "tools/call" (or "prompts/get") and is renamed when the server's answer
// admits the name. The tool and prompt names and the resource URI are cut
// as on the server (core.Truncate), and so is the status description, the
// server's error message, to core.LogErrorBytes.
// jsonrpc.request.id is not recorded: the client assigns the id after the
// middleware runs. A sampler sees the span's name, kind and parent; the
// attributes are set when the Call ends, on a span that records.
//
// With neither provider set (the zero Options) it records and injects
// nothing and returns the next Handler unchanged. The returned Middleware
// is safe for concurrent use.
func ClientMiddleware(opts Options) client.Middleware {
	if opts.TracerProvider == nil && opts.MeterProvider == nil {
		// Nothing to record: the chain is left as it is.
		return func(next client.Handler) client.Handler { return next }
	}
	m := &clientMW{}
	m.init(opts, trace.SpanKindClient, MetricClientOperationDuration,
		"The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received.")
	return func(next client.Handler) client.Handler {
		return func(ctx context.Context, c *client.Call) (*client.Outcome, error) { return m.send(ctx, c, next) }
	}
}

// clientMW is the state of one ClientMiddleware, shared by its calls.
type clientMW struct {
	instruments
	peer atomic.Pointer[peer] // the last URL's server.address and port
}

// peer is server.address and server.port of a URL.
type peer struct {
	url  string
	host string
	port int
}

// peerOf returns the server address and port of rawURL, parsed once per
// distinct URL in a row (a client talks to one endpoint).
func (m *clientMW) peerOf(rawURL string) *peer {
	if p := m.peer.Load(); p != nil && p.url == rawURL {
		return p
	}
	p := &peer{url: rawURL}
	if u, err := url.Parse(rawURL); err == nil && u.Hostname() != "" {
		p.host = u.Hostname()
		p.port, _ = strconv.Atoi(u.Port())
		switch {
		case p.port != 0:
		case u.Scheme == "https":
			p.port = 443
		case u.Scheme == "http":
			p.port = 80
		}
	}
	m.peer.Store(p)
	return p
}

func (m *clientMW) send(ctx context.Context, c *client.Call, next client.Handler) (*client.Outcome, error) {
	start := time.Now()
	names := m.names(c.Method)
	// A tool or prompt name is in the span's name once the server has
	// answered a Call of it in neither -32601 nor -32602 (the names the
	// histogram admits): a program may forward a model's choice of name,
	// and invented names must not make new span names.
	name, named := c.Method, true
	if names != nil && c.Target != "" {
		name, named = names.known(c.Target)
		if !named {
			name = c.Method
		}
	}
	sctx, span := m.tr.Start(ctx, name, m.start...)
	defer span.End()
	m.prop.Inject(sctx, callCarrier{c})

	out, err := next(sctx, c)

	et, code := clientErrorType(err, out)
	p := m.peerOf(c.URL)
	target := ""
	if names != nil {
		target = names.admit(c.Target, code != "-32602" && code != "-32601")
	}
	if span.IsRecording() {
		if !named && target == c.Target {
			span.SetName(names.spanName(c.Method, c.Target))
		}
		var buf [maxSpanAttrs]attribute.KeyValue
		a := m.attrs(buf[:0], c, p, et, code)
		a = targetAttrs(a, c.Method, c.Target, true)
		if c.SessionID != "" {
			a = append(a, KeySessionID.String(m.opts.sessionID(c.SessionID)))
		}
		if c.Round != 0 {
			a = append(a, KeyRound.Int(c.Round))
		}
		span.SetAttributes(slices.Clone(a)...)
		if et != "" {
			// The server's message: bounded, as a hostile server may send
			// megabytes.
			span.SetStatus(codes.Error, core.Truncate(clientErrorMessage(err, et), core.LogErrorBytes))
		}
	}
	if m.hist.Enabled(ctx) {
		var k setKey
		a := m.attrs(k[:0], c, p, et, code)
		// The names a program sends may come from a model's choice:
		// bounded as the server's are (admitted above).
		a = targetAttrs(a, c.Method, target, false)
		m.hist.Record(ctx, time.Since(start).Seconds(), m.sets.opts(&k, len(a))...)
	}
	return out, err
}

// attrs appends the attributes the span and the histogram share, less
// the target's.
func (m *clientMW) attrs(a []attribute.KeyValue, c *client.Call, p *peer, et, code string) []attribute.KeyValue {
	a = append(a, KeyMethodName.String(c.Method))
	if c.Version != "" {
		a = append(a, KeyProtocolVersion.String(c.Version))
	}
	a = append(a, KeyNetworkProtoName.String("http"), KeyNetworkTransport.String("tcp"))
	if p.host != "" {
		a = append(a, KeyServerAddress.String(p.host))
		if p.port != 0 {
			a = append(a, KeyServerPort.Int(p.port))
		}
	}
	if et != "" {
		a = append(a, KeyErrorType.String(et))
		if code != "" {
			a = append(a, KeyRPCStatusCode.String(code))
		}
	}
	return a
}

// callCarrier writes the propagator's fields into the request's _meta and
// its HTTP headers.
type callCarrier struct{ c *client.Call }

func (cc callCarrier) Set(key, value string) {
	cc.c.SetMeta(key, value)
	cc.c.SetHeader(key, value)
}

func (callCarrier) Get(string) string { return "" }
func (callCarrier) Keys() []string    { return nil }

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
		code := codeString(me.Code)
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
