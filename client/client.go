package client

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"unique"

	"github.com/mcpfn/mcpfn/mcp"
)

// Client holds what outlives one connection: the configuration (Options,
// copied by New), the handlers, the HTTP client and the token source, the
// result cache its Conns share, and the era of each endpoint it probed.
// It connects to endpoints and hands out Conns (Connect, Adopt,
// InitializeLegacy); Discover probes without connecting.
//
// A Client is safe for concurrent use, and so are its Conns: any number of
// Conns, to one endpoint or several, may run calls at once. Its handlers
// (Options.Elicitation, Sampling, Roots, Notification) are called from the
// goroutines of every Conn's calls and streams, concurrently. A Client
// holds no goroutine and no connection of its own (the HTTP client's idle
// connections aside), so it needs no Close: closing a Conn ends that
// connection only, and a Client nothing refers to is garbage. Its memory is
// bounded: the cache by Options.CacheEntries and Options.MaxTTL, the era
// memory by MaxEras.
//
// # Era memory
//
// In ModeAuto, Connect remembers the era the probe found for the endpoint
// URL (2026-07-28 basic/transports/streamable-http §Backward
// Compatibility), so that the Client's later Connects to it skip the
// probe; a remembered era that fails (legacy evidence on a modern request,
// an initialize that fails) is forgotten, and the next Connect probes
// again. The memory holds MaxEras endpoints, the least recently used going
// first.
//
// # Cache
//
// The Conns of a Client share one cache, keyed by endpoint: a Conn opened
// again to an endpoint is served the results its predecessor got while
// they are fresh. Private entries belong to the Client's credential source
// (see the package doc, "Cache"), which every Conn of the Client shares.
type Client struct {
	opts Options
	// err is what is wrong with the Options New was given: every Connect,
	// Discover and Adopt fails with it.
	err error

	hc  *http.Client
	log *slog.Logger
	// caps are the capabilities the handlers declare, and capsJSON their
	// encoding; clientInfo is the encoding of Options.ClientInfo.
	caps       mcp.ClientCapabilities
	capsJSON   []byte
	clientInfo []byte
	// staticAuth: Options.Header carries an Authorization (a static
	// credential, sent when no TokenSource token replaces it).
	staticAuth bool

	cache *cache // nil: caching disabled
	eras  eraMemory
	// mw is Options.Middleware composed around the sending; nil: none.
	mw Handler
}

// MaxEras bounds the endpoints whose era a Client remembers.
const MaxEras = 1024

// New returns a Client configured by opts (nil means defaults); the
// Options are copied. New does no I/O and never fails: Options it cannot
// use (a SessionID that is not visible ASCII, a SessionVersion that is not
// a legacy version, a SessionID with ModeModern, a LegacyVersion that is
// not a legacy version) make every Connect,
// Discover and Adopt of the Client fail with the error.
func New(opts *Options) *Client {
	cl := &Client{}
	if opts != nil {
		cl.opts = *opts
	}
	o := &cl.opts
	// A copy with canonical names: a later change by the caller has no
	// effect, and "authorization" is the Authorization a token replaces.
	if o.Header != nil {
		h := make(http.Header, len(o.Header))
		for k, vs := range o.Header {
			if len(vs) > 0 {
				k = http.CanonicalHeaderKey(k)
				h[k] = append(h[k], vs...)
			}
		}
		o.Header = h
		cl.staticAuth = len(h["Authorization"]) > 0
	}
	if o.SessionID != "" {
		if o.SessionVersion == "" {
			o.SessionVersion = legacyVersions[0]
		}
		switch {
		case !visibleASCII(o.SessionID):
			cl.err = errors.New("mcp client: Options.SessionID must be visible ASCII")
		case !isLegacy(o.SessionVersion):
			cl.err = fmt.Errorf("mcp client: Options.SessionVersion %q is not a legacy version", o.SessionVersion)
		case o.Mode == ModeModern:
			cl.err = errors.New("mcp client: Options.SessionID needs a legacy connection, not ModeModern")
		}
	}
	if o.LegacyVersion != "" && !isLegacy(o.LegacyVersion) && cl.err == nil {
		cl.err = fmt.Errorf("mcp client: Options.LegacyVersion %q is not a legacy version", o.LegacyVersion)
	}
	if o.HTTPClient != nil {
		cl.hc = o.HTTPClient
	} else {
		cl.hc = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	cl.log = o.Logger
	if cl.log == nil {
		cl.log = slog.Default()
	}
	if o.MaxRounds <= 0 {
		o.MaxRounds = DefaultMaxRounds
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MaxTTL <= 0 {
		o.MaxTTL = DefaultMaxTTL
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.StreamIdleTimeout == 0 {
		o.StreamIdleTimeout = DefaultStreamIdleTimeout
	}
	if o.ClientInfo.Name == "" {
		o.ClientInfo = mcp.Implementation{Name: "mcpfn-client", Version: "0"}
	}
	if o.CacheEntries == 0 {
		o.CacheEntries = DefaultCacheEntries
	}
	if o.CacheEntries > 0 {
		cl.cache = newCache(o.CacheEntries, o.MaxTTL)
	}
	if o.Elicitation != nil {
		e := &mcp.ElicitationCapabilities{Form: map[string]any{}}
		if o.ElicitationDefaults {
			e.Form["applyDefaults"] = true
		}
		if o.ElicitationURL {
			e.URL = map[string]any{}
		}
		cl.caps.Elicitation = e
	}
	if o.Sampling != nil {
		cl.caps.Sampling = &mcp.SamplingCapabilities{}
	}
	if o.Roots != nil {
		cl.caps.Roots = &mcp.RootsCapabilities{}
	}
	cl.capsJSON, _ = json.Marshal(&cl.caps)
	cl.clientInfo, _ = json.Marshal(&o.ClientInfo)
	cl.eras.init(MaxEras)
	cl.mw = chain(o.Middleware)
	o.Middleware = nil // composed in mw; the caller's slice is not kept
	return cl
}

// newConn returns a Conn to endpoint without a protocol: the caller sets
// one before anything is sent.
func (cl *Client) newConn(endpoint string) (*Conn, error) {
	if cl.err != nil {
		return nil, cl.err
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("mcp client: bad endpoint URL %q", endpoint)
	}
	return &Conn{cl: cl, url: endpoint, ep: unique.Make(endpoint), opts: &cl.opts}, nil
}

// successor returns a Conn to c's endpoint without a protocol, for another
// era than the one c tried while connecting; its request ids follow c's.
func (c *Conn) successor() *Conn {
	n := &Conn{cl: c.cl, url: c.url, ep: c.ep, opts: c.opts}
	n.nextID.Store(c.nextID.Load())
	return n
}

// Connect opens a connection to the MCP endpoint at url. In ModeAuto it
// probes the server (server/discover) unless the Client remembers the era
// of url; in ModeModern it sends nothing; in ModeLegacy it initializes a
// session (unless Options.NoInitialize). Given Options.SessionID it sends
// nothing and uses that legacy session.
func (cl *Client) Connect(ctx context.Context, url string) (*Conn, error) {
	return cl.connect(ctx, url, cl.opts.Mode)
}

// InitializeLegacy connects to url with a legacy initialize, whatever
// Options.Mode says.
func (cl *Client) InitializeLegacy(ctx context.Context, url string) (*Conn, error) {
	return cl.connect(ctx, url, ModeLegacy)
}

// Discover sends one server/discover to url and returns its result; it
// opens no connection, and neither reads nor fills the cache or the era
// memory. Adopt turns the result into a Conn without another round trip.
func (cl *Client) Discover(ctx context.Context, url string) (*Discovery, error) {
	c, err := cl.newConn(url)
	if err != nil {
		return nil, err
	}
	p := newModern(c, modernVersions[0], false)
	c.proto = p
	return p.discoverOnce(ctx, nil)
}

// Adopt returns a modern Conn for the endpoint d was discovered at, using a
// version from d.SupportedVersions, without contacting the server. It fails
// with ErrNoCommonVersion when d names none this client speaks.
func (cl *Client) Adopt(d *Discovery) (*Conn, error) {
	if d == nil {
		return nil, errors.New("mcp client: Adopt of a nil Discovery")
	}
	c, err := cl.newConn(d.URL)
	if err != nil {
		return nil, err
	}
	v := pickVersion(d.SupportedVersions)
	if v == "" {
		return nil, ErrNoCommonVersion
	}
	c.proto = newModern(c, v, false)
	c.discovery = d
	return c, nil
}

// connect opens a Conn to endpoint in mode.
func (cl *Client) connect(ctx context.Context, endpoint string, mode Mode) (*Conn, error) {
	c, err := cl.newConn(endpoint)
	if err != nil {
		return nil, err
	}
	if cl.opts.SessionID != "" {
		c.proto = adoptLegacy(c, cl.opts.SessionID, cl.opts.SessionVersion)
		return c, nil
	}
	switch mode {
	case ModeModern:
		c.proto = newModern(c, modernVersions[0], false)
		return c, nil
	case ModeLegacy:
		return startLegacy(ctx, c, cl.legacyVersion(nil))
	}
	if modern, ok := cl.eras.get(endpoint); ok {
		if modern {
			c.proto = newModern(c, modernVersions[0], true)
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
	c.proto = p
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
			c.proto = p
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
				c.proto = newModern(c, v, false)
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

// Connect opens a connection to url with a Client of its own: it is
// New(opts).Connect(ctx, url). The Client is not kept, so a later Connect
// probes again; connect through one Client to share the era memory and the
// cache.
func Connect(ctx context.Context, url string, opts *Options) (*Conn, error) {
	return New(opts).Connect(ctx, url)
}

// InitializeLegacy is New(opts).InitializeLegacy(ctx, url).
func InitializeLegacy(ctx context.Context, url string, opts *Options) (*Conn, error) {
	return New(opts).InitializeLegacy(ctx, url)
}

// Discover is New(opts).Discover(ctx, url).
func Discover(ctx context.Context, url string, opts *Options) (*Discovery, error) {
	return New(opts).Discover(ctx, url)
}

// Adopt is New(opts).Adopt(d).
func Adopt(d *Discovery, opts *Options) (*Conn, error) {
	return New(opts).Adopt(d)
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
