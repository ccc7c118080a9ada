package client

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"unique"

	"github.com/mcpfn/mcpfn/mcp"
)

// Conn is a connection to one MCP endpoint, in the era its Client chose
// when it connected; the era never changes. A Conn is safe for concurrent
// use: any number of calls, Listens and a Close may run at once (calls
// after Close fail with ErrClosed). It shares its Client's configuration,
// handlers, token source and cache with the Client's other Conns.
type Conn struct {
	cl   *Client
	opts *Options // the Client's, read-only
	url  string
	// ep is url as the cache keys it (interned: a key compares and hashes
	// a pointer, not the URL).
	ep  unique.Handle[string]
	era era // set before the Conn is handed out, never changed

	nextID atomic.Int64
	closed atomic.Bool
	// discovery is the server/discover result the Conn was opened with
	// (a probe's, or Adopt's), if any.
	discovery *Discovery

	mu sync.Mutex
	// toolsMemo: the decoding of the last tools/list page per cursor;
	// lastPage the one decoded or reused last.
	toolsMemo map[string]*toolsMemo
	lastPage  atomic.Pointer[toolsMemo]
}

// Discovery is what a server/discover told the client about an endpoint:
// the result, the endpoint that gave it, and the result as received.
type Discovery struct {
	mcp.DiscoverResult
	// URL is the endpoint that answered.
	URL string
	// ServerInfo is _meta["io.modelcontextprotocol/serverInfo"], if sent.
	ServerInfo *mcp.Implementation `json:"-"`
	// Raw is the whole result as received.
	Raw json.RawMessage `json:"-"`
}

// Initialization is what a legacy Conn learnt from initialize: the result,
// and the result as received.
type Initialization struct {
	mcp.InitializeResult
	// Raw is the whole result as received (nil for a Conn that did not
	// initialize).
	Raw json.RawMessage `json:"-"`
}

// ProtocolVersion is the protocol version in use.
func (c *Conn) ProtocolVersion() string { return c.era.version() }

// URL is the endpoint.
func (c *Conn) URL() string { return c.url }

// Discovery returns the server/discover result the Conn was opened with
// (the probe's, or the one given to Adopt), or nil.
func (c *Conn) Discovery() *Discovery { return c.discovery }

// InitializeResult returns what the legacy initialize answered, or nil
// (modern). A Conn that did not initialize (Options.NoInitialize,
// Options.SessionID) returns one with only ProtocolVersion set and a nil
// Raw.
func (c *Conn) InitializeResult() *Initialization {
	_, init := c.era.session()
	return init
}

// SessionID returns the id of the legacy session of the Conn's own
// credential ("" for modern Conns and sessionless legacy ones). With
// ProtocolVersion it lets another Conn adopt the session
// (Options.SessionID, Options.SessionVersion). It changes when the server
// ends the session and the Conn starts a new one.
func (c *Conn) SessionID() string {
	id, _ := c.era.session()
	return id
}

// Close ends the connection: legacy sessions are ended with DELETE and
// their GET streams closed. Calls after Close fail with ErrClosed. The
// Client's cache and era memory stay: a Conn opened again to the endpoint
// uses them. Close is idempotent; only the first call does anything.
func (c *Conn) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return nil
	}
	return c.era.close(context.Background())
}

func (c *Conn) isClosed() bool { return c.closed.Load() }

// do sends r in the Conn's era and hands its result to CallOptions.RawResult.
func (c *Conn) do(ctx context.Context, r *request) (json.RawMessage, error) {
	if c.isClosed() {
		return nil, ErrClosed
	}
	res, err := c.era.call(ctx, *r)
	if err != nil {
		return nil, err
	}
	r.co.keepRaw(res)
	return res, nil
}

// dispatch handles a server notification: progress goes to the request's
// CallOptions.Progress function (x, nil outside a request's stream), change
// notifications drop what they make stale from the cache, then the
// Client's Notification handler and the era have it.
func (c *Conn) dispatch(m *wireMessage, x *exchange) {
	switch m.Method {
	case "notifications/progress":
		if x != nil && x.progress != nil {
			var p struct {
				Progress
				Token json.RawMessage `json:"progressToken"`
			}
			if json.Unmarshal(m.Params, &p) == nil && sameID(p.Token, x.id) {
				x.progress(p.Progress)
			}
		}
		return
	case "notifications/tools/list_changed":
		c.invalidate("tools/list", "")
	case "notifications/prompts/list_changed":
		c.invalidate("prompts/list", "")
	case "notifications/resources/list_changed":
		c.invalidate("resources/list", "")
		c.invalidate("resources/templates/list", "")
	case "notifications/resources/updated":
		var p struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			c.invalidate("resources/read", p.URI)
		}
	}
	n := Notification{Method: m.Method, Params: m.Params}
	if c.opts.Notification != nil {
		c.opts.Notification(n.Method, n.Params)
	}
	c.era.notified(n)
}

// invalidate drops the endpoint's cached entries of method (only key's,
// when set).
func (c *Conn) invalidate(method, key string) {
	if c.cl.cache != nil {
		c.cl.cache.dropMethod(c.ep, method, key)
	}
}

// invalidateOnError drops cached pages a failure shows to be stale: all
// pages of a list whose cursor was rejected, and the tool list on -32020.
func (c *Conn) invalidateOnError(method, target string, err error) {
	var re *mcp.Error
	if c.cl.cache == nil || !errors.As(err, &re) {
		return
	}
	switch {
	case re.Code == mcp.CodeHeaderMismatch:
		c.cl.cache.dropMethod(c.ep, "tools/list", "")
	case re.Code == mcp.CodeInvalidParams && target != "" && isList(method):
		c.cl.cache.dropMethod(c.ep, method, "")
	}
}

func isList(m string) bool {
	switch m {
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
		return true
	}
	return false
}
