package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpfn/mcpfn/mcp"
)

// Conn is a connection to one MCP endpoint, in the era Connect chose. It is
// safe for concurrent use.
type Conn struct {
	url  string
	opts Options
	hc   *http.Client
	log  *slog.Logger

	modern  bool
	version string // the protocol version in use

	nextID atomic.Int64
	caps   mcp.ClientCapabilities
	// metaBase is the fixed part of a modern request's _meta, without the
	// braces: version, capabilities, clientInfo, logLevel.
	metaBase []byte
	capsJSON []byte

	discovery *Discovery // modern: the server/discover result, if any

	// staticAuth: Options.Header carries an Authorization (a static
	// credential, sent when no TokenSource token replaces it).
	staticAuth bool

	mu       sync.Mutex
	headers  map[string]*toolHeaders // x-mcp-header declarations by tool name
	unlisted map[string]struct{}     // tools a declaration walk did not find
	learnSem chan struct{}           // one declaration walk at a time
	// maxHeaderBytes is maxHeaderBytes (tests lower it).
	maxHeaderBytes int
	eraFromCache   bool // the era came from eraCache, not a probe
	// toolsMemo: the decoding of the last tools/list page per cursor.
	toolsMemo map[string]*toolsMemo
	closed    atomic.Bool

	legacy *legacyState
	cache  *cache
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

// modernVersions are the stateless revisions this client speaks, newest
// first; legacyVersions the initialize-based ones.
var (
	modernVersions = []string{mcp.ProtocolVersion20260728}
	legacyVersions = []string{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20250618, mcp.ProtocolVersion20250326}
)

func isLegacy(v string) bool { return contains(legacyVersions, v) }

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// eraCache remembers, per endpoint, the era found by probing, so that later
// Connects in ModeAuto skip the probe (2026-07-28 streamable-http
// §Backward Compatibility: clients SHOULD cache the era per origin).
var eraCache sync.Map // endpoint URL → bool (true = modern)

// ForgetEra drops what ModeAuto remembers about url's era.
func ForgetEra(url string) { eraCache.Delete(url) }

func newConn(endpoint string, opts *Options) (*Conn, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("mcp client: bad endpoint URL %q", endpoint)
	}
	c := &Conn{url: endpoint, headers: map[string]*toolHeaders{}, learnSem: make(chan struct{}, 1), maxHeaderBytes: maxHeaderBytes}
	if opts != nil {
		c.opts = *opts
	}
	o := &c.opts
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
		c.staticAuth = len(h["Authorization"]) > 0
	}
	if o.SessionID != "" {
		if !visibleASCII(o.SessionID) {
			return nil, errors.New("mcp client: Options.SessionID must be visible ASCII")
		}
		if o.SessionVersion == "" {
			o.SessionVersion = legacyVersions[0]
		}
		if !isLegacy(o.SessionVersion) {
			return nil, fmt.Errorf("mcp client: Options.SessionVersion %q is not a legacy version", o.SessionVersion)
		}
		if o.Mode == ModeModern {
			return nil, errors.New("mcp client: Options.SessionID needs a legacy connection, not ModeModern")
		}
	}
	if o.HTTPClient != nil {
		c.hc = o.HTTPClient
	} else {
		c.hc = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	c.log = o.Logger
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
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
	if o.now == nil {
		o.now = time.Now
	}
	if o.ClientInfo.Name == "" {
		o.ClientInfo = mcp.Implementation{Name: "mcpfn-client", Version: "0"}
	}
	if o.CacheEntries == 0 {
		o.CacheEntries = DefaultCacheEntries
	}
	if o.CacheEntries > 0 {
		c.cache = newCache(o.CacheEntries, o.MaxTTL, o.now)
	}
	if o.Elicitation != nil {
		e := &mcp.ElicitationCapabilities{Form: map[string]any{}}
		if o.ElicitationDefaults {
			e.Form["applyDefaults"] = true
		}
		if o.ElicitationURL {
			e.URL = map[string]any{}
		}
		c.caps.Elicitation = e
	}
	if o.Sampling != nil {
		c.caps.Sampling = &mcp.SamplingCapabilities{}
	}
	if o.Roots != nil {
		c.caps.Roots = &mcp.RootsCapabilities{}
	}
	c.capsJSON, _ = json.Marshal(&c.caps)
	return c, nil
}

// Connect opens a connection to the MCP endpoint at url. In ModeAuto it
// probes the server (server/discover) unless the era of url is already
// known; in ModeModern it sends nothing; in ModeLegacy it initializes a
// session (unless Options.NoInitialize). Given Options.SessionID it sends
// nothing and uses that legacy session.
func Connect(ctx context.Context, url string, opts *Options) (*Conn, error) {
	c, err := newConn(url, opts)
	if err != nil {
		return nil, err
	}
	if c.opts.SessionID != "" {
		c.adoptLegacy(c.opts.SessionID, c.opts.SessionVersion)
		return c, nil
	}
	switch c.opts.Mode {
	case ModeModern:
		c.setModern(mcp.ProtocolVersion20260728)
		return c, nil
	case ModeLegacy:
		if err := c.startLegacy(ctx, legacyVersions[0]); err != nil {
			return nil, err
		}
		return c, nil
	}
	if v, ok := eraCache.Load(url); ok {
		c.eraFromCache = true
		if v.(bool) {
			c.setModern(mcp.ProtocolVersion20260728)
			return c, nil
		}
		if err := c.startLegacy(ctx, legacyVersions[0]); err == nil {
			return c, nil
		}
		eraCache.Delete(url) // re-probe on failure
		c.legacy, c.eraFromCache = nil, false
	}
	if err := c.probe(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// InitializeLegacy connects to url with a legacy initialize, whatever
// opts.Mode says.
func InitializeLegacy(ctx context.Context, url string, opts *Options) (*Conn, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.Mode = ModeLegacy
	return Connect(ctx, url, &o)
}

// Discover sends one server/discover to url and returns its result; it
// opens no connection. Adopt turns the result into a Conn without another
// round trip.
func Discover(ctx context.Context, url string, opts *Options) (*Discovery, error) {
	c, err := newConn(url, opts)
	if err != nil {
		return nil, err
	}
	c.setModern(mcp.ProtocolVersion20260728)
	return c.discover(ctx, nil)
}

// Adopt returns a modern Conn for the endpoint d was discovered at, using a
// version from d.SupportedVersions, without contacting the server.
func Adopt(d *Discovery, opts *Options) (*Conn, error) {
	if d == nil {
		return nil, errors.New("mcp client: Adopt of a nil Discovery")
	}
	c, err := newConn(d.URL, opts)
	if err != nil {
		return nil, err
	}
	for _, v := range modernVersions {
		if contains(d.SupportedVersions, v) {
			c.setModern(v)
			c.discovery = d
			return c, nil
		}
	}
	return nil, ErrNoCommonVersion
}

func (c *Conn) setModern(version string) {
	c.modern, c.version = true, version
	b := append([]byte(`"`+mcp.MetaProtocolVersion+`":`), strconv.Quote(version)...)
	b = append(b, `,"`+mcp.MetaClientCapabilities+`":`...)
	b = append(b, c.capsJSON...)
	if !c.opts.OmitClientInfo {
		ij, _ := json.Marshal(&c.opts.ClientInfo)
		b = append(append(b, `,"`+mcp.MetaClientInfo+`":`...), ij...)
	}
	if c.opts.LogLevel != "" {
		b = append(append(b, `,"`+mcp.MetaLogLevel+`":`...), strconv.Quote(string(c.opts.LogLevel))...)
	}
	c.metaBase = b
}

// probe implements ModeAuto's era detection.
func (c *Conn) probe(ctx context.Context) error {
	c.setModern(modernVersions[0])
	probeOpts := &callOptions{noVersionRetry: true}
	d, err := c.discover(ctx, probeOpts)
	var uv *mcp.Error
	if errors.As(err, &uv) && uv.Code == mcp.CodeUnsupportedProtocolVersion {
		// Retry once with a version from data.supported (even the one
		// sent), legacy when only legacy ones are listed.
		supported := uv.Supported()
		next := pickVersion(supported)
		switch {
		case next != "":
			c.setModern(next)
			d, err = c.discover(ctx, probeOpts)
		case hasAny(supported, legacyVersions):
			return c.connectLegacyFromProbe(ctx, supported)
		default:
			return fmt.Errorf("%w: server supports %v", ErrNoCommonVersion, supported)
		}
	}
	if err == nil {
		if v := pickVersion(d.SupportedVersions); v != "" {
			if v != c.version {
				c.setModern(v)
			}
			c.discovery = d
			eraCache.Store(c.url, true)
			return nil
		}
		if hasAny(d.SupportedVersions, legacyVersions) {
			return c.connectLegacyFromProbe(ctx, d.SupportedVersions)
		}
		return fmt.Errorf("%w: server supports %v", ErrNoCommonVersion, d.SupportedVersions)
	}
	if legacyEvidence(err) {
		return c.connectLegacyFromProbe(ctx, nil)
	}
	return err
}

func (c *Conn) connectLegacyFromProbe(ctx context.Context, supported []string) error {
	v := legacyVersions[0]
	for _, lv := range legacyVersions {
		if contains(supported, lv) {
			v = lv
			break
		}
	}
	if err := c.startLegacy(ctx, v); err != nil {
		return err
	}
	eraCache.Store(c.url, false)
	return nil
}

func pickVersion(list []string) string {
	for _, v := range modernVersions {
		if contains(list, v) {
			return v
		}
	}
	return ""
}

func hasAny(list, want []string) bool {
	for _, v := range want {
		if contains(list, v) {
			return true
		}
	}
	return false
}

// legacyEvidence reports whether a failed modern probe means "this server
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

// Modern reports whether c speaks the 2026-07-28 revision.
func (c *Conn) Modern() bool { return c.modern }

// ProtocolVersion is the protocol version in use.
func (c *Conn) ProtocolVersion() string { return c.version }

// URL is the endpoint.
func (c *Conn) URL() string { return c.url }

// Discovery returns the server/discover result the probe got (modern), or
// nil.
func (c *Conn) Discovery() *Discovery { return c.discovery }

// InitializeResult returns what the legacy initialize answered, or nil
// (modern). A Conn that did not initialize (Options.NoInitialize,
// Options.SessionID) returns one with only ProtocolVersion set and a nil
// Raw.
func (c *Conn) InitializeResult() *Initialization {
	if c.legacy == nil {
		return nil
	}
	return c.legacy.def.initResult()
}

// SessionID returns the id of the legacy session of the Conn's own
// credential ("" for modern Conns and sessionless legacy ones). With
// ProtocolVersion it lets another Conn adopt the session
// (Options.SessionID, Options.SessionVersion). It changes when the server
// ends the session and the Conn starts a new one.
func (c *Conn) SessionID() string {
	if c.legacy == nil {
		return ""
	}
	id, _ := c.legacy.def.snapshot()
	return id
}

// Close ends the connection: legacy sessions are ended with DELETE, the
// cache is dropped. Calls after Close fail with ErrClosed.
func (c *Conn) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return nil
	}
	if c.cache != nil {
		c.cache.clear()
	}
	if c.legacy != nil {
		return c.legacy.close(context.Background(), c)
	}
	return nil
}

func (c *Conn) isClosed() bool { return c.closed.Load() }

// --- HTTP -------------------------------------------------------------------

// httpReq describes one HTTP exchange.
type httpReq struct {
	method  string // HTTP method
	body    []byte
	header  http.Header // request-specific headers
	rpc     string      // MCP method, for errors
	co      *callOptions
	legacyS *session // legacy session whose id to send
}

// send does one HTTP exchange with authorization: on a 401, or a 403 whose
// challenge says insufficient_scope, a Challenger token source is asked to
// authorize and the request is sent again, at most maxAuthAttempts times in
// all. It returns the response with its body unread for 2xx; any other
// status is turned into an error (*mcp.Error if the body is a JSON-RPC
// error, else *HTTPError).
func (c *Conn) send(ctx context.Context, hr *httpReq, build func(h http.Header)) (*http.Response, error) {
	for attempt := 1; ; attempt++ {
		authz, err := c.authorization(ctx, hr.co)
		if err != nil {
			return nil, err
		}
		t := c.startTiming(ctx, hr.rpc)
		req, err := http.NewRequestWithContext(t.ctx, hr.method, c.url, bytes.NewReader(hr.body))
		if err != nil {
			t.done()
			return nil, err
		}
		h := req.Header
		for k, vs := range c.opts.Header {
			h[k] = append([]string(nil), vs...)
		}
		if hr.co != nil {
			for k, vs := range hr.co.header {
				h[k] = append([]string(nil), vs...)
			}
		}
		for k, vs := range hr.header {
			h[k] = vs
		}
		if build != nil {
			build(h)
		}
		switch {
		case authz != "":
			h["Authorization"] = []string{authz}
		case hr.co != nil && hr.co.hasAuth:
			delete(h, "Authorization") // the call's own credential is none
		}
		resp, err := c.hc.Do(req)
		if err != nil {
			err = t.err(err)
			t.done()
			return nil, err
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			t.watch(resp)
			return resp, nil
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		err = t.err(err)
		t.done()
		if errors.Is(err, ErrTimeout) {
			return nil, err
		}
		if isAuthChallenge(resp) {
			ch, ok := c.opts.TokenSource.(Challenger)
			if ok && (hr.co == nil || !hr.co.hasAuth) && attempt < maxAuthAttempts {
				if err := ch.Challenge(ctx, c.url, resp); err != nil {
					return nil, err
				}
				if c.cache != nil {
					c.cache.dropPrivate() // new token: private entries go
				}
				continue
			}
		}
		return nil, statusError(hr.rpc, resp, body)
	}
}

// ErrTimeout: a request got no complete answer within
// Options.RequestTimeout, or its SSE stream stayed silent for
// Options.StreamIdleTimeout. The errors that match it also match
// context.DeadlineExceeded.
var ErrTimeout = errors.New("mcp client: timed out")

// timeoutError is the cause of a cancelled exchange: what ran out and
// after how long. It matches ErrTimeout and context.DeadlineExceeded.
type timeoutError struct {
	method string
	what   string
	after  time.Duration
}

func (e *timeoutError) Error() string {
	m := e.method
	if m == "" {
		m = "GET stream"
	}
	return "mcp client: " + m + ": timed out: " + e.what + " " + e.after.String()
}

func (e *timeoutError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}

// Timeout reports true, as net.Error timeouts do.
func (e *timeoutError) Timeout() bool { return true }

// timing bounds one HTTP exchange: Options.RequestTimeout from sending the
// request until its answer is complete, or until the answer turns out to be
// an SSE stream; from then on Options.StreamIdleTimeout between two reads
// that return bytes. Either cancels the exchange's context with a
// *timeoutError. The caller's context is not touched: its cancellation
// still reads as itself.
type timing struct {
	ctx      context.Context
	cancel   context.CancelCauseFunc
	method   string
	deadline *time.Timer // nil: no request timeout
	idle     time.Duration
	idleT    *time.Timer // running while a stream is read
	body     io.ReadCloser
}

func (c *Conn) startTiming(ctx context.Context, method string) *timing {
	t := &timing{method: method, idle: c.opts.StreamIdleTimeout}
	t.ctx, t.cancel = context.WithCancelCause(ctx)
	if d := c.opts.RequestTimeout; d > 0 {
		t.deadline = time.AfterFunc(d, func() {
			t.cancel(&timeoutError{method: method, what: "no complete answer within", after: d})
		})
	}
	return t
}

// watch takes over resp.Body: the request deadline keeps running for a
// plain body; an SSE stream trades it for the idle bound.
func (t *timing) watch(resp *http.Response) {
	t.body = resp.Body
	resp.Body = t
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" {
		return
	}
	if t.deadline != nil {
		t.deadline.Stop()
	}
	if t.idle > 0 {
		d := t.idle
		t.idleT = time.AfterFunc(d, func() {
			t.cancel(&timeoutError{method: t.method, what: "SSE stream silent for", after: d})
		})
	}
}

// Read reads the body; every read that returns bytes, a keep-alive comment
// as much as an event, restarts the idle bound.
func (t *timing) Read(p []byte) (int, error) {
	n, err := t.body.Read(p)
	if n > 0 && t.idleT != nil {
		t.idleT.Reset(t.idle)
	}
	if err != nil && err != io.EOF {
		err = t.err(err)
	}
	return n, err
}

// Close closes the body and ends the exchange.
func (t *timing) Close() error {
	err := t.body.Close()
	t.done()
	return err
}

// err is the *timeoutError that cancelled the exchange, if one did, in
// place of the transport's error; else err.
func (t *timing) err(err error) error {
	if err == nil {
		return nil
	}
	if cause := context.Cause(t.ctx); cause != nil && errors.Is(cause, ErrTimeout) {
		return cause
	}
	return err
}

// done stops the timers and releases the exchange's context.
func (t *timing) done() {
	if t.deadline != nil {
		t.deadline.Stop()
	}
	if t.idleT != nil {
		t.idleT.Stop()
	}
	t.cancel(nil)
}

// isAuthChallenge: 401, or 403 with error="insufficient_scope".
func isAuthChallenge(resp *http.Response) bool {
	if resp.StatusCode == http.StatusUnauthorized {
		return true
	}
	if resp.StatusCode == http.StatusForbidden {
		if p, ok := mcp.BearerChallenge(resp.Header); ok && p["error"] == "insufficient_scope" {
			return true
		}
	}
	return false
}

// statusError turns a non-2xx response into an error.
func statusError(method string, resp *http.Response, body []byte) error {
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		if m, err := decodeMessage(body); err == nil && m.isResponse() && m.Error != nil {
			return rpcError(method, resp.StatusCode, m.Error)
		}
	}
	if len(body) > 4096 {
		body = body[:4096]
	}
	return &HTTPError{Method: method, StatusCode: resp.StatusCode, Header: resp.Header, Body: body}
}

// Is lets errors.Is(err, ErrUnauthorized) match a 401 or 403.
func (e *HTTPError) Is(target error) bool {
	return target == ErrUnauthorized && (e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden)
}

// authorization returns the Authorization value a request sends: the
// call's own credential, else "Bearer " and the TokenSource's token; ""
// leaves Options.Header's Authorization, if any, in place.
func (c *Conn) authorization(ctx context.Context, co *callOptions) (string, error) {
	if co != nil && co.hasAuth {
		return co.authz, nil
	}
	if c.opts.TokenSource == nil {
		return "", nil
	}
	tok, err := c.opts.TokenSource.Token(ctx)
	if err != nil || tok == "" {
		return "", err
	}
	return "Bearer " + tok, nil
}

// credential tells which credential of the Conn a request without one of
// its own carries: the TokenSource's token, the static Authorization of
// Options.Header, or none. Private cache entries are kept per credential
// source (see cache).
func (c *Conn) credential(ctx context.Context) (credSource, error) {
	if c.opts.TokenSource != nil {
		tok, err := c.opts.TokenSource.Token(ctx)
		if err != nil {
			return 0, err
		}
		if tok != "" {
			return credToken, nil
		}
	}
	if c.staticAuth {
		return credStatic, nil
	}
	return credNone, nil
}

// visibleASCII reports whether s is not empty and only visible ASCII
// (0x21-0x7E), as session ids must be.
func visibleASCII(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// exchange is the reading side of one request: it reads a JSON or SSE
// response until the response to id arrives, handing notifications and
// (legacy) server requests on.
type exchange struct {
	c        *Conn
	id       int64
	method   string
	progress func(Progress)
	sess     *session // legacy
	lastID   string   // last SSE event id (legacy resumption)
	retry    time.Duration
	// onNote, when set, takes the notifications of the stream.
	onNote func(*wireMessage) bool
	// maxInputs, when positive, bounds the server requests for input
	// (legacy elicitation/create, sampling/createMessage, roots/list) the
	// exchange answers, across its resumptions: Options.MaxRounds, one
	// round per request. inputs counts them.
	maxInputs, inputs int
}

// read returns the result of the response, an error response as *mcp.Error,
// or ErrStreamBroken if the stream ended first.
func (x *exchange) read(ctx context.Context, resp *http.Response) (json.RawMessage, error) {
	defer resp.Body.Close()
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		body, err := readLimited(resp.Body, x.c.opts.MaxResponseBytes)
		if errors.Is(err, ErrTimeout) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrStreamBroken, err)
		}
		m, err := decodeMessage(body)
		if err != nil {
			return nil, err
		}
		if !m.isResponse() {
			return nil, protocolError("JSON body is not a response")
		}
		return x.response(m, resp.StatusCode)
	case "text/event-stream":
		return x.readSSE(ctx, resp.Body, resp.StatusCode)
	}
	if resp.StatusCode == http.StatusAccepted {
		return nil, protocolError("202 Accepted for a request")
	}
	return nil, protocolError("response Content-Type %q", resp.Header.Get("Content-Type"))
}

func (x *exchange) response(m *wireMessage, status int) (json.RawMessage, error) {
	if !sameID(m.ID, x.id) {
		if m.ID == nil && m.Error != nil {
			return nil, rpcError(x.method, status, m.Error)
		}
		return nil, protocolError("response id %s, want %d", m.ID, x.id)
	}
	if m.Error != nil {
		return nil, rpcError(x.method, status, m.Error)
	}
	return m.Result, nil
}

func (x *exchange) readSSE(ctx context.Context, body io.Reader, status int) (json.RawMessage, error) {
	r := newSSEReader(body, x.c.opts.MaxResponseBytes)
	defer func() {
		// A resumed stream that sends no id keeps the last one known.
		if r.lastID != "" {
			x.lastID = r.lastID
		}
		if r.retry > 0 {
			x.retry = r.retry
		}
	}()
	for {
		ev, err := r.next()
		if r.lastID != "" {
			x.lastID = r.lastID
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if errors.Is(err, ErrTimeout) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", ErrStreamBroken, err)
		}
		if ev.Event != "" && ev.Event != "message" {
			continue
		}
		m, err := decodeMessage(ev.Data)
		if err != nil {
			return nil, err
		}
		if m.isResponse() {
			if sameID(m.ID, x.id) {
				return x.response(m, status)
			}
			continue // not ours
		}
		if x.onNote != nil && m.ID == nil && x.onNote(m) {
			continue
		}
		if m.ID != nil && x.maxInputs > 0 && inputMethod(m.Method) {
			if x.inputs++; x.inputs > x.maxInputs {
				// One request too many: refuse it, and end the call
				// (the caller sends notifications/cancelled).
				if x.sess != nil {
					x.c.refuseServerRequest(ctx, x.sess, m, "input round limit reached")
				}
				return nil, &MaxRoundsError{Method: x.method, Rounds: x.maxInputs}
			}
		}
		x.c.dispatch(ctx, m, x)
	}
}

// inputMethod reports whether a server request asks for input, which
// counts as a round.
func inputMethod(m string) bool {
	return m == "elicitation/create" || m == "sampling/createMessage" || m == "roots/list"
}

func readLimited(r io.Reader, max int) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > max {
		return nil, errEventTooLarge
	}
	return b, nil
}

// dispatch handles a server notification or (legacy) request.
func (c *Conn) dispatch(ctx context.Context, m *wireMessage, x *exchange) {
	if m.ID != nil {
		// A server request: legacy only (modern servers MUST NOT send any).
		if c.legacy != nil && x != nil && x.sess != nil {
			c.answerServerRequest(ctx, x.sess, m)
		}
		return
	}
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
		c.forgetUnlisted()
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
	if c.opts.Notification != nil {
		c.opts.Notification(m.Method, m.Params)
	}
	if c.legacy != nil {
		c.legacy.listen.deliver(Notification{Method: m.Method, Params: m.Params})
	}
}

func (c *Conn) invalidate(method, key string) {
	if c.cache != nil {
		c.cache.dropMethod(method, key)
	}
}

// params is an ordered list of top-level params members, each raw JSON.
type params []field

type field struct {
	key string
	raw []byte
}

func (p params) with(key string, raw []byte) params {
	out := make(params, 0, len(p)+1)
	for _, f := range p {
		if f.key != key {
			out = append(out, f)
		}
	}
	return append(out, field{key, raw})
}

// appendRequest appends {"jsonrpc":"2.0","id":id,"method":m,"params":{...}}.
// meta, when non-nil, is the inside of the _meta object.
func appendRequest(b []byte, id int64, method string, p params, meta []byte, withParams bool) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":`...)
	b = appendJSONString(b, method)
	if withParams || len(p) > 0 || meta != nil {
		b = append(b, `,"params":{`...)
		for i, f := range p {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, f.key)
			b = append(b, ':')
			b = append(b, f.raw...)
		}
		if meta != nil {
			if len(p) > 0 {
				b = append(b, ',')
			}
			b = append(append(append(b, `"_meta":{`...), meta...), '}')
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// mcpName returns the Mcp-Name value of a request, if its method has one.
func mcpName(method string, p params) (string, bool) {
	key := ""
	switch method {
	case "tools/call", "prompts/get":
		key = "name"
	case "resources/read":
		key = "uri"
	default:
		return "", false
	}
	for _, f := range p {
		if f.key == key {
			var s string
			if json.Unmarshal(f.raw, &s) == nil {
				return s, true
			}
		}
	}
	return "", false
}

const acceptBoth = "application/json, text/event-stream"

func quoteJSON(s string) []byte { return appendJSONString(nil, s) }
