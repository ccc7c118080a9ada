package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
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
	cl.err = checkLegacyOptions(o)
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
	cl.caps.Extensions = declaredExtensions(o.Extensions)
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
	c.era = p
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
	c.era = newModern(c, v, false)
	c.discovery = d
	return c, nil
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
