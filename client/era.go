package client

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/mcpfn/mcpfn/mcp"
)

// era is the protocol era a Conn speaks: the stateless 2026-07-28 revision
// (modernEra, era_modern.go) or the initialize-based revisions
// (legacyEra, era_legacy.go). The Client chooses it once, while it
// connects (client.go), before the Conn is handed out; from then on the
// Conn passes every request to it and never asks which era it speaks. This
// is the client half of the seam connect-go calls protocolClient.
//
// Implementations are safe for concurrent use, as a Conn is.
type era interface {
	// version is the protocol version in use; it never changes.
	version() string
	// call sends r and returns its complete result, running its input
	// rounds with the Conn's handlers (2026-07-28: input_required results
	// retried; legacy: server requests on the stream answered).
	call(ctx context.Context, r request) (json.RawMessage, error)
	// callOnce sends one round of r. A 2026-07-28 input_required result
	// becomes a Continuation; a legacy call answers its server requests
	// on the stream and never returns one.
	callOnce(ctx context.Context, r request) (json.RawMessage, *Continuation, error)
	// discover sends server/discover, through the cache; a legacy
	// connection has none.
	discover(ctx context.Context, co *callOptions) (*Discovery, error)
	// listen delivers the server's change notifications (Conn.Listen).
	listen(ctx context.Context, f mcp.SubscriptionFilter, ack func(mcp.SubscriptionFilter), fn func(Notification)) error
	// keepTool says whether a tool of a tools/list page is kept, and
	// learns what the era needs to know of it: in 2026-07-28 its
	// x-mcp-header declarations, and a tool whose declarations are invalid
	// is dropped.
	keepTool(t *mcp.Tool) bool
	// notified is told of each server notification, after the Conn's
	// handlers had it.
	notified(n Notification)
	// session returns the id and initialize result of the legacy session
	// of the Conn's own credential ("" and nil in 2026-07-28).
	session() (id string, init *Initialization)
	// close ends what the era holds open: legacy sessions, GET streams.
	close(ctx context.Context) error
	// tasks reports whether a call may become a task: the Tasks extension
	// (io.modelcontextprotocol/tasks) is of 2026-07-28.
	tasks() bool
	// forward relays a host's 2026-07-28 request as it is (Conn.Forward);
	// a legacy connection refuses it without sending anything.
	forward(ctx context.Context, msg json.RawMessage, fn func(Notification)) (json.RawMessage, error)
}

// Modern reports whether c speaks the 2026-07-28 revision.
func (c *Conn) Modern() bool { return !isLegacy(c.era.version()) }

// arguments returns the raw "arguments" of r's params (nil when absent).
func (r *request) arguments() json.RawMessage {
	for _, f := range r.params {
		if f.key == "arguments" {
			return f.raw
		}
	}
	return nil
}

// request is one MCP request as a Conn hands it to its era. It is a
// struct, so that a field can be added without touching every method (as
// connect-go's protocolClientParams), passed to the era by value so
// that it stays on the caller's stack.
type request struct {
	method string
	params params
	// co are the call's options; nil means none.
	co *callOptions
	// header holds request-specific HTTP headers (Mcp-Param-*).
	header http.Header
	// target is the cache key of a cacheable request: the cursor ("c:" +
	// cursor) or the resource URI.
	target string
	// tool names the tool of a toolCall; its arguments are the params'
	// "arguments" (arguments).
	tool string
	// cacheable: a complete result may be cached (2026-07-28
	// server/utilities/caching).
	cacheable bool
	// toolCall marks a tools/call of CallTool or CallToolOnce.
	toolCall bool
	// meta, when set, replaces the era's fixed _meta members (without
	// braces): the entries a Middleware left in Call.Meta.
	meta []byte
	// mwHeader are the HTTP headers a Middleware set (Call.Header).
	mwHeader http.Header
	// cached, for a result the cache may store, is the credential and the
	// cache generation read before the request was sent: send updates
	// them when an authorization challenge sends it again with a new
	// token.
	cached cacheAt
}

// cacheAt is the credential source and cache generation a request was
// sent with (cache.put).
type cacheAt struct {
	src credSource
	gen uint64
}

// The protocol versions this client speaks, newest first: the stateless
// revisions, and the initialize-based ones.
var (
	modernVersions = [...]string{mcp.ProtocolVersion20260728}
	legacyVersions = [...]string{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20250618, mcp.ProtocolVersion20250326}
)

// isLegacy reports whether v is an initialize-based version this client
// speaks.
func isLegacy(v string) bool {
	for _, lv := range legacyVersions {
		if lv == v {
			return true
		}
	}
	return false
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// pickVersion returns the newest modern version of list this client
// speaks, or "".
func pickVersion(list []string) string {
	for _, v := range modernVersions {
		if contains(list, v) {
			return v
		}
	}
	return ""
}

// pickLegacy returns the newest legacy version of list this client speaks,
// or the newest it speaks when list names none.
func pickLegacy(list []string) string {
	for _, v := range legacyVersions {
		if contains(list, v) {
			return v
		}
	}
	return legacyVersions[0]
}

// hasLegacy reports whether list names a legacy version this client speaks.
func hasLegacy(list []string) bool {
	for _, v := range list {
		if isLegacy(v) {
			return true
		}
	}
	return false
}

// legacyEvidence reports whether a failed modern request means "this server
// speaks an initialize-based revision": 400/404/405 with an empty or
// unrecognised body, or -32601 (2026-07-28 streamable-http §Backward
// Compatibility). -32020/-32021/-32022 are modern; 401/403 are no evidence.
func legacyEvidence(err error) bool {
	var he *HTTPError
	if errors.As(err, &he) {
		switch he.StatusCode {
		case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
			return true
		}
		return false
	}
	var re *mcp.Error
	if errors.As(err, &re) {
		switch re.Code {
		case mcp.CodeMethodNotFound:
			return true
		case mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredClientCapability, mcp.CodeUnsupportedProtocolVersion:
			return false
		}
		// A JSON-RPC error we do not recognise on a 400/404/405 is as good
		// as an unrecognised body: legacy servers answer the unknown
		// server/discover (or a request without a session) that way.
		switch re.ResponseStatus() {
		case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
			return true
		}
	}
	return false
}

// connect opens a Conn to endpoint in mode.
func (cl *Client) connect(ctx context.Context, endpoint string, mode Mode) (*Conn, error) {
	c, err := cl.newConn(endpoint)
	if err != nil {
		return nil, err
	}
	if cl.opts.SessionID != "" {
		c.era = adoptLegacy(c, cl.opts.SessionID, cl.opts.SessionVersion)
		return c, nil
	}
	switch mode {
	case ModeModern:
		c.era = newModern(c, modernVersions[0], false)
		return c, nil
	case ModeLegacy:
		return startLegacy(ctx, c, cl.legacyVersion(nil))
	}
	if modern, ok := cl.eras.get(endpoint); ok {
		if modern {
			c.era = newModern(c, modernVersions[0], true)
			return c, nil
		}
		if lc, err := startLegacy(ctx, c, cl.legacyVersion(nil)); err == nil {
			return lc, nil
		}
		cl.eras.forget(endpoint) // re-probe on failure
		c = c.successor()
	}
	return cl.probe(ctx, c)
}

// probe implements ModeAuto's era detection on c, a Conn without a
// protocol, and returns the Conn of the era found: c itself when modern, a
// new legacy Conn otherwise.
func (cl *Client) probe(ctx context.Context, c *Conn) (*Conn, error) {
	p := newModern(c, modernVersions[0], false)
	c.era = p
	probeOpts := &callOptions{noVersionRetry: true}
	d, err := p.discoverOnce(ctx, probeOpts)
	var uv *mcp.Error
	if errors.As(err, &uv) && uv.Code == mcp.CodeUnsupportedProtocolVersion {
		// Retry once with a version from data.supported (even the one
		// sent), legacy when only legacy ones are listed.
		supported := uv.Supported()
		next := pickVersion(supported)
		switch {
		case next != "":
			p = newModern(c, next, false)
			c.era = p
			d, err = p.discoverOnce(ctx, probeOpts)
		case hasLegacy(supported):
			return cl.legacyAfterProbe(ctx, c, supported)
		default:
			return nil, fmt.Errorf("%w: server supports %v", ErrNoCommonVersion, supported)
		}
	}
	if err == nil {
		if v := pickVersion(d.SupportedVersions); v != "" {
			if v != p.version() {
				c.era = newModern(c, v, false)
			}
			c.discovery = d
			cl.eras.remember(c.url, true)
			return c, nil
		}
		if hasLegacy(d.SupportedVersions) {
			return cl.legacyAfterProbe(ctx, c, d.SupportedVersions)
		}
		return nil, fmt.Errorf("%w: server supports %v", ErrNoCommonVersion, d.SupportedVersions)
	}
	if legacyEvidence(err) {
		return cl.legacyAfterProbe(ctx, c, nil)
	}
	return nil, err
}

// legacyAfterProbe connects to the endpoint probe probed in the newest
// legacy version of supported (the newest this client speaks when it names
// none), and remembers the era.
func (cl *Client) legacyAfterProbe(ctx context.Context, probe *Conn, supported []string) (*Conn, error) {
	c, err := startLegacy(ctx, probe.successor(), cl.legacyVersion(supported))
	if err != nil {
		return nil, err
	}
	cl.eras.remember(c.url, false)
	return c, nil
}

// legacyVersion returns the version a legacy initialize asks for:
// Options.LegacyVersion, else the newest legacy version of supported (the
// versions a probe's answer named), else the newest this client speaks.
func (cl *Client) legacyVersion(supported []string) string {
	if cl.opts.LegacyVersion != "" {
		return cl.opts.LegacyVersion
	}
	return pickLegacy(supported)
}

// eraMemory remembers, per endpoint URL, whether the server speaks
// 2026-07-28 (2026-07-28 basic/transports/streamable-http §Backward
// Compatibility: clients SHOULD cache the era). It holds at most max
// endpoints, the least recently used going first. Safe for concurrent use.
type eraMemory struct {
	mu    sync.Mutex
	max   int
	ll    *list.List // of *eraEntry, most recently used first
	byURL map[string]*list.Element
}

type eraEntry struct {
	url    string
	modern bool
}

func (m *eraMemory) init(max int) {
	m.max, m.ll, m.byURL = max, list.New(), map[string]*list.Element{}
}

// get returns the era remembered for url.
func (m *eraMemory) get(url string) (modern, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.byURL[url]
	if !ok {
		return false, false
	}
	m.ll.MoveToFront(el)
	return el.Value.(*eraEntry).modern, true
}

// remember records the era of url.
func (m *eraMemory) remember(url string, modern bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.byURL[url]; ok {
		el.Value.(*eraEntry).modern = modern
		m.ll.MoveToFront(el)
		return
	}
	m.byURL[url] = m.ll.PushFront(&eraEntry{url: url, modern: modern})
	for m.ll.Len() > m.max {
		old := m.ll.Back()
		m.ll.Remove(old)
		delete(m.byURL, old.Value.(*eraEntry).url)
	}
}

// forget drops what is remembered of url.
func (m *eraMemory) forget(url string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.byURL[url]; ok {
		m.ll.Remove(el)
		delete(m.byURL, url)
	}
}

// len returns the number of endpoints remembered.
func (m *eraMemory) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ll.Len()
}

// cachedAt returns where send updates the credential and generation of a
// cacheable request; nil for others.
func (r *request) cachedAt() *cacheAt {
	if !r.cacheable {
		return nil
	}
	return &r.cached
}
