package client

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Middleware wraps the sending of every MCP request a Client's Conns send,
// in both eras, as core.Middleware wraps a server's handling: it gets the
// next Handler and returns one that may look at or change the Call (add
// _meta entries or HTTP headers, such as W3C trace context), change the
// context next runs in (a span, a deadline), measure or log the request,
// look at its Outcome, or return an error without calling next, in which
// case nothing is sent and the caller gets that error.
//
// Options.Middleware lists them outermost first: with [A, B], A runs
// first and calls B, which calls the client's sending; the Outcome comes
// back through B, then A. The chain is built once, by New.
//
// One Call is one JSON-RPC request as the client's caller would count
// it: one round of a 2026-07-28 multi round-trip request (each
// input_required retry, carrying inputResponses and requestState, is a
// Call of its own with Round one higher), a legacy request with the server
// requests answered on its stream, initialize, server/discover (the probe
// of Connect too: against a legacy server it ends in the error that makes
// the client initialize), subscriptions/listen (its Handler returns when
// the stream ends), the tools/list a tools/call reads to learn the tools'
// x-mcp-header declarations, and, after a -32020, the tools/list and the
// tools/call sent again (two more Calls), and each tasks/get, tasks/update
// and tasks/cancel the wait for a task sends (Options.Tasks). Repeats at the transport level
// belong to the Call they repeat and run inside its Handler: the request
// sent again after a 401/403 challenge authorized a new token, or after a
// 429 or 503 (Options.MaxRetries), a broken
// 2026-07-28 stream sent again, the -32022 retry with the same version, a
// legacy request sent again in a new session after a 404 (the new
// session's initialize is a Call of its own, run inside the one that
// needed it), Last-Event-ID resumptions. A result served by the cache
// sends nothing and is not a Call; notifications, the client's answers to server requests, GET
// streams and DELETE are not requests either.
//
// A Middleware is called concurrently, from every Conn of the Client.
type Middleware func(next Handler) Handler

// Handler sends one Call and returns its Outcome. A JSON-RPC error is
// returned as a *mcp.Error (errors.As gives its Code); an HTTP status
// without one as a *HTTPError; a tool's own failure is an Outcome with
// IsError. A middleware's Handler may return an Outcome of its own without
// calling next: its Result is then the answer (a 2026-07-28 result with
// its resultType, absent meaning complete). Neither an Outcome nor an
// error is a protocol error.
type Handler func(ctx context.Context, c *Call) (*Outcome, error)

// Call is one MCP request as the middleware sees it, before it is sent.
// The Handler may change Meta and Header until it calls next; it must not
// keep the Call after it returns.
type Call struct {
	// Method is the JSON-RPC method, e.g. "tools/call".
	Method string
	// Target is what the method acts on: the tool name of tools/call, the
	// prompt name of prompts/get, the URI of resources/read,
	// resources/subscribe and resources/unsubscribe; "" for others.
	Target string
	// URL is the endpoint.
	URL string
	// Version is the protocol version the request is sent in (for
	// initialize, the version it asks for; for the probe, 2026-07-28).
	Version string
	// Modern reports the 2026-07-28 era; false is an initialize-based
	// revision.
	Modern bool
	// SessionID is the legacy session the request is sent in ("" in
	// 2026-07-28, for initialize, and in sessionless legacy Conns). A 404
	// renewal sends it in a new session.
	SessionID string
	// Round counts the input rounds before this one in the logical call:
	// 0 for the first request, n for the n-th 2026-07-28 input_required
	// retry. Always 0 in legacy, where the server asks for input on the
	// request's own stream.
	Round int
	// Meta are the params._meta entries the request is sent with, by key,
	// each a JSON value. A middleware may add, change or delete entries;
	// the request carries them as they are when the chain's last Handler
	// calls the client's sending (e.g. "traceparent", "tracestate",
	// "baggage": W3C trace context, 2026-07-28 basic/index §_meta,
	// SEP-414). In 2026-07-28 it starts with the client's own entries
	// (protocol version, capabilities, client info, log level); changing
	// those makes the request disagree with its mirrored headers, which
	// servers reject. In legacy it starts empty (nil). "progressToken" is
	// added per message (CallOptions.Progress) and is not here. A Meta left as it
	// was is not encoded again.
	Meta map[string]json.RawMessage
	// Header holds HTTP headers the request is sent with, over
	// Options.Header and the call's CallOptions.Header; every HTTP attempt of the
	// Call carries them. Headers the client sets itself (Content-Type,
	// Accept, Mcp-*, MCP-Protocol-Version, Mcp-Session-Id, Authorization
	// when the Conn has a credential) override them. Nil until a
	// middleware sets one (SetHeader).
	Header http.Header

	// The chain's end sends the Call: by sender with req where the era
	// sends its rounds itself (no closure on the hot path), else by send.
	sender roundSender
	req    *request
	send   func(ctx context.Context, c *Call) (*Outcome, error)
	// out is the Outcome the sending returns (no allocation of its own).
	out Outcome
}

// SetMeta sets the _meta entry key to the JSON string value.
func (c *Call) SetMeta(key, value string) {
	if c.Meta == nil {
		c.Meta = map[string]json.RawMessage{}
	}
	c.Meta[key] = quoteJSON(value)
}

// SetHeader sets the HTTP header key to value, making Header if needed.
func (c *Call) SetHeader(key, value string) {
	if c.Header == nil {
		c.Header = http.Header{}
	}
	c.Header.Set(key, value)
}

// Outcome is how a Call that got a result ended.
type Outcome struct {
	// Result is the JSON-RPC result as received (nil for
	// subscriptions/listen, whose stream carried notifications).
	Result json.RawMessage
	// InputRequired: a 2026-07-28 result of resultType input_required;
	// the call goes on with a Call of the next Round (or hands the round
	// to its caller: CallToolOnce).
	InputRequired bool
	// IsError: a complete tools/call result with isError true, a tool's
	// own failure (not a JSON-RPC error).
	IsError bool

	// rt is the resultType the sending read ("" for an Outcome a
	// middleware made).
	rt string
}

// Status names how a Call ended, as core.Outcome.Status does on the
// server: "ok", "isError", "input_required", or "error" when err is not
// nil.
func (o *Outcome) Status(err error) string {
	switch {
	case err != nil || o == nil:
		return "error"
	case o.InputRequired:
		return "input_required"
	case o.IsError:
		return "isError"
	}
	return "ok"
}

// chain composes mws around the terminal Handler, the first outermost; nil
// when there are none.
func chain(mws []Middleware) Handler {
	if len(mws) == 0 {
		return nil
	}
	h := Handler(terminal)
	for _, m := range slices.Backward(mws) {
		if m != nil {
			h = m(h)
		}
	}
	return h
}

// roundSender sends one round of a Call (an era's own sending).
type roundSender interface {
	sendCall(ctx context.Context, c *Call) (*Outcome, error)
}

// terminal is the end of every chain: the client's sending of req.
func terminal(ctx context.Context, c *Call) (*Outcome, error) {
	if c.sender != nil {
		return c.sender.sendCall(ctx, c)
	}
	return c.send(ctx, c)
}

// intercept runs req through the Client's middleware; send does the
// sending. A Handler returning neither an Outcome nor an error is a
// protocol error.
func (c *Conn) intercept(ctx context.Context, req *Call, send func(context.Context, *Call) (*Outcome, error)) (*Outcome, error) {
	req.send = send
	req.URL = c.url
	resp, err := c.cl.mw(ctx, req)
	if err == nil && resp == nil {
		err = protocolError("%s: middleware returned no response and no error", req.Method)
	}
	return resp, err
}

// metaTemplate decodes a fixed _meta (without braces) into the entries a
// Call starts from; memo keeps the decoding.
type metaTemplate struct {
	once sync.Once
	m    map[string]json.RawMessage
}

func (t *metaTemplate) clone(base []byte) map[string]json.RawMessage {
	t.once.Do(func() {
		t.m = map[string]json.RawMessage{}
		if len(base) > 0 {
			_ = json.Unmarshal(append(append([]byte{'{'}, base...), '}'), &t.m)
		}
	})
	if len(t.m) == 0 {
		return nil
	}
	return maps.Clone(t.m)
}

// unchanged reports whether m still holds exactly the template's entries,
// the same bytes (a middleware that only looked): the era's fixed _meta is
// then sent as it is, without encoding m.
func (t *metaTemplate) unchanged(m map[string]json.RawMessage) bool {
	if len(m) != len(t.m) || len(m) == 0 {
		return false
	}
	for k, v := range t.m {
		w, ok := m[k]
		if !ok || len(w) != len(v) || len(v) == 0 || &w[0] != &v[0] {
			return false
		}
	}
	return true
}

// encodeMeta encodes m as the members of a _meta object (no braces), keys
// sorted; nil for an empty m. A value that is not valid JSON is sent as
// null, so that a middleware cannot break the request's framing.
func encodeMeta(m map[string]json.RawMessage) []byte {
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := make([]byte, 0, 64*len(keys))
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendJSONString(b, k), ':')
		if v := m[k]; json.Valid(v) {
			b = append(b, v...)
		} else {
			b = append(b, "null"...)
		}
	}
	return b
}

// appendProgress appends the progressToken member for id to meta (a
// fresh slice).
func appendProgress(meta []byte, id int64) []byte {
	b := make([]byte, 0, len(meta)+32)
	if len(meta) > 0 {
		b = append(append(b, meta...), ',')
	}
	return strconv.AppendInt(append(b, `"progressToken":`...), id, 10)
}

// outcome makes the Outcome of the sent Call c (its own out): the result,
// its resultType, and isError of a complete tools/call result.
func (c *Call) outcome(res json.RawMessage, rt string) *Outcome {
	c.out = Outcome{Result: res, rt: rt, InputRequired: rt == resultInputRequired}
	if c.Method == "tools/call" && rt != resultInputRequired {
		c.out.IsError = isErrorOf(res)
	}
	return &c.out
}

// isErrorOf is isError of a tools/call result as encoding/json (and so
// the result's decoding) reads it, without decoding the result: a scan of
// its top-level members, exact for plain ASCII keys; a key with an escape
// or a non-ASCII byte (which encoding/json may fold onto "isError"), a
// value of the key that is not a boolean or null falls back to
// encoding/json.
//
// b must be valid JSON, as every result the client hands to outcome is (it
// was decoded as part of its JSON-RPC message), so the scan does not
// validate; on invalid JSON the answer is unspecified, but the scan stays
// within b and linear in its length.
func isErrorOf(b []byte) bool {
	v, ok := scanIsError(b)
	if !ok {
		var w struct {
			IsError bool `json:"isError"`
		}
		_ = json.Unmarshal(b, &w)
		return w.IsError
	}
	return v
}

// scanIsError is isErrorOf's scan; ok false means "fall back".
func scanIsError(b []byte) (isErr, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return false, skipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false, false
		}
		end := skipString(b, i)
		if end < 0 {
			return false, false
		}
		key := b[i+1 : end-1]
		for _, c := range key {
			if c == '\\' || c >= 0x80 {
				return false, false
			}
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return false, false
		}
		i = skipSpace(b, i+1)
		if strings.EqualFold(string(key), "isError") {
			switch {
			case hasLiteral(b[i:], "true"):
				isErr, i = true, i+4
			case hasLiteral(b[i:], "false"):
				isErr, i = false, i+5
			case hasLiteral(b[i:], "null"):
				i += 4 // encoding/json leaves the value as it was
			default:
				return false, false
			}
		} else if i = skipValue(b, i); i < 0 {
			return false, false
		}
		i = skipSpace(b, i)
		if i < len(b) && b[i] == '}' {
			return isErr, skipSpace(b, i+1) == len(b)
		}
		if i >= len(b) || b[i] != ',' {
			return false, false
		}
		i = skipSpace(b, i+1)
	}
}

func hasLiteral(b []byte, lit string) bool {
	return len(b) >= len(lit) && string(b[:len(lit)]) == lit
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the JSON string starting at b[i]
// (a quote), or -1.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index after the JSON value starting at b[i], or
// -1. Nested objects and arrays are skipped by counting brackets outside
// strings, without recursion, so depth costs no stack. It does not
// validate (isErrorOf's input is valid JSON).
func skipValue(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			if i = skipString(b, i); i < 0 {
				return -1
			}
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of a scalar
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	if depth == 0 {
		return i
	}
	return -1
}

// targetOf is Call.Target of a request.
func targetOf(method string, p params) string {
	key := ""
	switch method {
	case "tools/call", "prompts/get":
		key = "name"
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		key = "uri"
	default:
		return ""
	}
	for _, f := range p {
		if f.key != key {
			continue
		}
		// A JSON string without escapes is its bytes between the quotes.
		if raw := f.raw; len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && !slices.Contains(raw, '\\') {
			return string(raw[1 : len(raw)-1])
		}
		var s string
		if json.Unmarshal(f.raw, &s) == nil {
			return s
		}
	}
	return ""
}
