package auth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/mcp"
)

// Defaults.
const (
	// DefaultLeeway is the clock skew tolerated on exp, nbf and iat.
	DefaultLeeway = time.Minute
	// DefaultJWKSTTL is how long a fetched JWKS is used before it is
	// refetched (lazily, by the next request that needs it).
	DefaultJWKSTTL = 15 * time.Minute
	// DefaultJWKSMinInterval is the least time between two fetches caused by
	// unknown key ids or failures.
	DefaultJWKSMinInterval = 30 * time.Second
	// DefaultFetchTimeout bounds a JWKS, metadata or introspection request.
	DefaultFetchTimeout = 5 * time.Second
	// DefaultIntrospectionCacheTTL bounds how long an introspection answer is
	// reused (never beyond the token's exp).
	DefaultIntrospectionCacheTTL = time.Minute
	// DefaultIntrospectionCacheSize bounds the cached introspection answers
	// (active ones, and separately inactive ones).
	DefaultIntrospectionCacheSize = 10000
	// DefaultIntrospectionNegativeCacheTTL is how long an inactive answer
	// (an unknown, expired or revoked token, or one that is not an access
	// token) is reused: repeating an unknown token then costs the
	// authorization server one call per period, while a token that its
	// server reported inactive by mistake (a replica that has not yet seen
	// a fresh token) recovers within seconds.
	DefaultIntrospectionNegativeCacheTTL = 5 * time.Second
	// DefaultIntrospectionConcurrency bounds the introspection requests in
	// flight at once.
	DefaultIntrospectionConcurrency = 16
	// DefaultJWTCacheSize bounds the cache of verified JWTs.
	DefaultJWTCacheSize = 10000
	// DefaultRetryAfter is the Retry-After of a 503 answered when the
	// authorization server is unavailable.
	DefaultRetryAfter = 5 * time.Second
	// DefaultTokenType is the JWT "typ" accepted by default (RFC 9068 §2.1).
	DefaultTokenType = "at+jwt"
	// MetadataPathPrefix is the well-known prefix of protected resource
	// metadata (RFC 9728 §3).
	MetadataPathPrefix = "/.well-known/oauth-protected-resource"
)

const (
	maxJWKSBytes          = 256 << 10
	maxJWKSKeys           = 64
	maxIntrospectionBytes = 64 << 10
)

// Options configures New. New copies it; later changes have no effect.
type Options struct {
	// Resource is the canonical URI of the MCP endpoint as clients use it,
	// e.g. "https://mcp.example.com/mcp" (RFC 8707 §2; 2026-07-28
	// basic/authorization §Canonical Server URI): https (http only on a
	// loopback host), no fragment. It is never derived from the request.
	// Required unless Resources is set.
	Resource string
	// Resources lists several canonical URIs of one server reached under
	// different hosts (virtual hosting); a request's Host picks the one it
	// is for, and a request whose Host matches none is answered 421.
	// Resource, when also set, is added to them.
	Resources []string
	// MetadataURL is the URL of the protected resource metadata document as
	// clients reach it, when that differs from the well-known URL derived
	// from the resource (an API Gateway stage prefix, a Cloud Functions
	// gen1 URL). Its path, as the handler sees it, serves the document too,
	// and challenges name this URL. Only with a single resource.
	MetadataURL string
	// MetadataPath is the path of MetadataURL as the handler sees it, when
	// the platform strips a prefix before the function (Cloud Functions
	// gen1 strip the function's name). Empty means MetadataURL's path.
	MetadataPath string
	// ResourceName is the human-readable resource_name of the document.
	ResourceName string

	// Issuers are the authorization servers whose tokens are accepted. At
	// least one; at most one may use introspection.
	Issuers []Issuer
	// Audiences are extra accepted "aud" values besides the resource URI.
	Audiences []string

	// Required are the scopes every request needs.
	Required []string
	// ToolScopes are the scopes a tools/call of a tool needs, by tool name.
	ToolScopes map[string][]string
	// PromptScopes are the scopes a prompts/get needs, by prompt name, and
	// a completion/complete of the prompt's arguments too (core.Operation.Ref
	// "ref/prompt"): completions can reveal what the prompt would.
	PromptScopes map[string][]string
	// Scopes, when set, returns extra scopes an operation needs, e.g.
	// depending on its arguments, or the scopes of a resource (resources/read
	// names the URI; completion/complete with Ref "ref/resource" names the
	// template). It runs per request and must be fast and safe for
	// concurrent use.
	Scopes func(ctx context.Context, op core.Operation) []string
	// Implies declares a scope hierarchy: a scope implies the listed ones
	// (transitively), and a token granting it satisfies them.
	Implies map[string][]string
	// ScopesSupported is the document's scopes_supported. Nil means the
	// Required scopes plus those of ToolScopes and PromptScopes.
	ScopesSupported []string

	// JWTCacheSize bounds the cache of verified JWTs (by SHA-256 of the
	// token, each until the earlier of its exp and the issuer's JWKSTTL),
	// which spares repeated signature checks of the same token. Zero means
	// DefaultJWTCacheSize; negative disables it. Time and audience checks
	// run on every request either way.
	JWTCacheSize int

	// Leeway is the tolerated clock skew. Zero means DefaultLeeway.
	Leeway time.Duration
	// RetryAfter is sent with 503 answers. Zero means DefaultRetryAfter.
	RetryAfter time.Duration
	// HTTPClient fetches JWKS and metadata and calls introspection. Nil
	// means a client with DefaultFetchTimeout. The resource uses a copy
	// whose CheckRedirect follows no redirect: a 3xx answer is a failure
	// (503 to the caller, and a log line naming the Location), so that an
	// introspection form is never re-sent elsewhere; configure final URLs.
	// Every request is also bounded by DefaultFetchTimeout, and every
	// response body by a size limit, whatever the client's settings.
	HTTPClient *http.Client
	// Logger receives warnings about the authorization servers. Nil means
	// slog.Default() (as it is when New runs); slog.New(slog.DiscardHandler)
	// silences them. Tokens are never logged.
	Logger *slog.Logger
}

// Issuer configures one accepted authorization server.
type Issuer struct {
	// Issuer is the issuer identifier, the exact "iss" of its tokens.
	// Required.
	Issuer string
	// JWKSURL is the issuer's jwks_uri. Empty means read it from the
	// issuer's RFC 8414 (or OpenID Connect) metadata, whose "issuer" must
	// equal Issuer.
	JWKSURL string
	// Introspection, when set, makes the resource introspect this issuer's
	// tokens (opaque tokens, and JWTs naming it) instead of verifying them.
	Introspection *Introspection
	// TokenTypes are the accepted JWT "typ" values, compared without case
	// and without an "application/" prefix. Nil means {DefaultTokenType};
	// {"*"} accepts any, including none.
	TokenTypes []string
	// ScopeClaim names the claim holding the granted scopes (a
	// space-separated string or an array). Empty means "scope".
	ScopeClaim string
	// ClientClaim names the claim holding the client id. Empty means
	// "client_id" (RFC 9068 §2.2); "azp" is common for OpenID providers.
	ClientClaim string
	// JWKSTTL is how long fetched keys are used. Zero means DefaultJWKSTTL.
	JWKSTTL time.Duration
	// JWKSMinInterval is the least time between fetches for unknown key ids,
	// and after a failed fetch. While no key was ever fetched, a failed fetch
	// is retried after a second instead (or JWKSMinInterval, when shorter):
	// until one succeeds no token of the issuer verifies. Zero means
	// DefaultJWKSMinInterval.
	JWKSMinInterval time.Duration
}

// Introspection configures RFC 7662 token introspection.
type Introspection struct {
	// Endpoint is the introspection endpoint URL. Required.
	Endpoint string
	// ClientID and ClientSecret authenticate the resource to the endpoint
	// (client_secret_basic). Required.
	ClientID, ClientSecret string
	// CacheTTL bounds how long an answer is reused. Zero means
	// DefaultIntrospectionCacheTTL; negative disables the cache.
	CacheTTL time.Duration
	// CacheSize bounds the cached answers: active ones, and separately
	// inactive ones, so that unknown tokens cannot evict the answers of
	// valid ones. Zero means DefaultIntrospectionCacheSize.
	CacheSize int
	// NegativeCacheTTL is how long an inactive answer is reused, by the
	// SHA-256 of the token: "active": false, or an active token whose
	// token_type (or token_use) says it is not an access token. Only
	// answers count: an error or an unreadable answer (503 to the caller)
	// is never remembered. Zero means DefaultIntrospectionNegativeCacheTTL;
	// negative disables it.
	NegativeCacheTTL time.Duration
	// MaxConcurrent bounds the introspection requests in flight at once
	// (concurrent requests with one token share one). A request that needs
	// another while MaxConcurrent are in flight gets 503 with Retry-After at
	// once, as during an outage of the authorization server, without
	// calling it. Zero or negative means DefaultIntrospectionConcurrency.
	MaxConcurrent int
}

// issuer is a configured issuer, ready for use.
type issuer struct {
	name            string
	names           claimNames
	types           []string // lower-cased, without "application/"; nil: any
	jwksTTL         time.Duration
	jwksMinInterval time.Duration
	fetchTimeout    time.Duration
	client          *http.Client
	keys            *keySet
	intro           *introspector
}

// resourceEntry is one canonical resource and where its metadata lives.
type resourceEntry struct {
	uri       string
	host      string // lower-cased host[:port]
	docPaths  []string
	metaURL   string // the URL named by challenges
	doc       []byte
	audiences []string
}

// Resource is an OAuth 2.1 protected resource: a [core.Authenticator] that
// verifies bearer tokens, checks scopes per operation, answers with RFC 6750
// challenges and serves RFC 9728 metadata. Set it as
// core.ServerOptions.Authenticator. It is safe for concurrent use.
type Resource struct {
	resources    []*resourceEntry
	issuers      map[string]*issuer
	introspector *issuer // the issuer using introspection, or nil
	required     []string
	toolScopes   map[string][]string
	promptScopes map[string][]string
	scopesFn     func(context.Context, core.Operation) []string
	implies      implications
	jwtCache     tokenCache
	leeway       time.Duration
	retryAfter   string
	log          *slog.Logger
}

var _ core.Authenticator = (*Resource)(nil)

// New validates opts and returns the protected resource. Bad configuration
// (no issuer, a non-canonical resource URI, an invalid scope, offline_access,
// two introspecting issuers) is an error.
func New(opts Options) (*Resource, error) {
	r := &Resource{
		required:     append([]string(nil), opts.Required...),
		toolScopes:   copyScopeMap(opts.ToolScopes),
		promptScopes: copyScopeMap(opts.PromptScopes),
		scopesFn:     opts.Scopes,
		leeway:       opts.Leeway,
		issuers:      map[string]*issuer{},
		log:          opts.Logger,
	}
	if r.leeway == 0 {
		r.leeway = DefaultLeeway
	}
	r.jwtCache.max = opts.JWTCacheSize
	if r.jwtCache.max == 0 {
		r.jwtCache.max = DefaultJWTCacheSize
	}
	if r.leeway < 0 {
		return nil, errors.New("auth: negative Leeway")
	}
	ra := opts.RetryAfter
	if ra <= 0 {
		ra = DefaultRetryAfter
	}
	r.retryAfter = strconv.Itoa(int((ra + time.Second - 1) / time.Second))
	if r.log == nil {
		r.log = slog.Default()
	}
	if err := checkScopes("Required", r.required); err != nil {
		return nil, err
	}
	for name, s := range r.toolScopes {
		if err := checkScopes("ToolScopes["+name+"]", s); err != nil {
			return nil, err
		}
	}
	for name, s := range r.promptScopes {
		if err := checkScopes("PromptScopes["+name+"]", s); err != nil {
			return nil, err
		}
	}
	var err error
	if r.implies, err = closeImplies(opts.Implies); err != nil {
		return nil, err
	}
	supported := opts.ScopesSupported
	if supported == nil {
		supported = union(r.required)
		for _, m := range []map[string][]string{r.toolScopes, r.promptScopes} {
			for _, k := range sortedKeys(m) {
				supported = union(supported, m[k])
			}
		}
	}
	if err := checkScopes("ScopesSupported", supported); err != nil {
		return nil, err
	}

	// Issuers.
	if len(opts.Issuers) == 0 {
		return nil, errors.New("auth: no Issuers")
	}
	client := &http.Client{Timeout: DefaultFetchTimeout}
	if opts.HTTPClient != nil {
		c := *opts.HTTPClient
		client = &c
	}
	client.CheckRedirect = noRedirects
	var issNames []string
	for _, ic := range opts.Issuers {
		is, err := newIssuer(ic, client)
		if err != nil {
			return nil, err
		}
		if _, dup := r.issuers[is.name]; dup {
			return nil, fmt.Errorf("auth: issuer %q configured twice", is.name)
		}
		if is.intro != nil {
			if r.introspector != nil {
				return nil, errors.New("auth: at most one issuer may use introspection")
			}
			r.introspector = is
		}
		r.issuers[is.name] = is
		issNames = append(issNames, is.name)
	}

	// Resources and their metadata.
	uris := append([]string(nil), opts.Resources...)
	if opts.Resource != "" {
		uris = append([]string{opts.Resource}, uris...)
	}
	if len(uris) == 0 {
		return nil, errors.New("auth: no Resource")
	}
	if opts.MetadataPath != "" && (opts.MetadataURL == "" || !strings.HasPrefix(opts.MetadataPath, "/")) {
		return nil, errors.New("auth: MetadataPath needs MetadataURL and must start with /")
	}
	if opts.MetadataURL != "" && len(uris) > 1 {
		return nil, errors.New("auth: MetadataURL needs a single resource")
	}
	hosts := map[string]bool{}
	for _, u := range uris {
		e, err := newResourceEntry(u, opts.MetadataURL, opts.MetadataPath)
		if err != nil {
			return nil, err
		}
		if len(uris) > 1 && hosts[e.host] {
			return nil, fmt.Errorf("auth: two resources on host %q", e.host)
		}
		hosts[e.host] = true
		e.audiences = append([]string{e.uri}, opts.Audiences...)
		doc := struct {
			Resource               string   `json:"resource"`
			AuthorizationServers   []string `json:"authorization_servers"`
			ScopesSupported        []string `json:"scopes_supported,omitempty"`
			BearerMethodsSupported []string `json:"bearer_methods_supported"`
			ResourceName           string   `json:"resource_name,omitempty"`
		}{e.uri, issNames, supported, []string{"header"}, opts.ResourceName}
		if e.doc, err = json.Marshal(doc); err != nil {
			return nil, err
		}
		r.resources = append(r.resources, e)
	}
	return r, nil
}

func newIssuer(ic Issuer, client *http.Client) (*issuer, error) {
	u, err := url.Parse(ic.Issuer)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || !secureOrLoopback(u) {
		return nil, fmt.Errorf("auth: issuer %q must be an https URL without query or fragment (http only on loopback)", ic.Issuer)
	}
	is := &issuer{
		name:            ic.Issuer,
		names:           claimNames{scope: ic.ScopeClaim, client: ic.ClientClaim},
		jwksTTL:         ic.JWKSTTL,
		jwksMinInterval: ic.JWKSMinInterval,
		fetchTimeout:    DefaultFetchTimeout,
		client:          client,
	}
	if is.names.scope == "" {
		is.names.scope = "scope"
	}
	if is.names.client == "" {
		is.names.client = "client_id"
	}
	if is.jwksTTL <= 0 {
		is.jwksTTL = DefaultJWKSTTL
	}
	if is.jwksMinInterval <= 0 {
		is.jwksMinInterval = DefaultJWKSMinInterval
	}
	switch {
	case ic.TokenTypes == nil:
		is.types = []string{DefaultTokenType}
	case len(ic.TokenTypes) == 1 && ic.TokenTypes[0] == "*":
		is.types = nil
	default:
		for _, t := range ic.TokenTypes {
			is.types = append(is.types, normType(t))
		}
	}
	if ic.JWKSURL != "" {
		ju, err := url.Parse(ic.JWKSURL)
		if err != nil || ju.Host == "" || !secureOrLoopback(ju) {
			return nil, fmt.Errorf("auth: issuer %q: JWKSURL %q must be an https URL", ic.Issuer, ic.JWKSURL)
		}
	}
	is.keys = &keySet{iss: is, maxBytes: maxJWKSBytes, maxKeys: maxJWKSKeys, jwksURL: ic.JWKSURL}
	if in := ic.Introspection; in != nil {
		eu, err := url.Parse(in.Endpoint)
		if err != nil || eu.Host == "" || !secureOrLoopback(eu) {
			return nil, fmt.Errorf("auth: issuer %q: introspection endpoint %q must be an https URL", ic.Issuer, in.Endpoint)
		}
		if in.ClientID == "" || in.ClientSecret == "" {
			return nil, fmt.Errorf("auth: issuer %q: introspection needs ClientID and ClientSecret", ic.Issuer)
		}
		ttl, negTTL, size := in.CacheTTL, in.NegativeCacheTTL, in.CacheSize
		if ttl == 0 {
			ttl = DefaultIntrospectionCacheTTL
		}
		if negTTL == 0 {
			negTTL = DefaultIntrospectionNegativeCacheTTL
		}
		if size <= 0 {
			size = DefaultIntrospectionCacheSize
		}
		posSize, negSize := size, size
		if ttl < 0 {
			posSize = 0
		}
		if negTTL < 0 {
			negSize = 0
		}
		slots := in.MaxConcurrent
		if slots <= 0 {
			slots = DefaultIntrospectionConcurrency
		}
		is.intro = &introspector{iss: is, endpoint: in.Endpoint, id: in.ClientID, secret: in.ClientSecret,
			ttl: ttl, negTTL: negTTL, maxBytes: maxIntrospectionBytes,
			cache: tokenCache{max: posSize}, neg: tokenCache{max: negSize},
			slots: make(chan struct{}, slots), flights: map[[32]byte]*introFlight{}}
	}
	return is, nil
}

// noRedirects is the CheckRedirect of the resource's HTTP client: the
// redirect itself is returned, and refused as an answer (statusError).
// Metadata, JWKS and introspection requests follow no redirect: a 307
// would re-send the introspection form, with the token and the resource's
// credentials, to wherever it points, and a followed redirect would escape
// the https checks of configured and discovered URLs.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// normType lower-cases a media type and drops "application/" (RFC 7515
// §4.1.9).
func normType(t string) string {
	t = strings.ToLower(t)
	return strings.TrimPrefix(t, "application/")
}

// secureOrLoopback reports whether u is https, or http on a loopback host.
func secureOrLoopback(u *url.URL) bool {
	if u.Scheme == "https" {
		return true
	}
	if u.Scheme != "http" {
		return false
	}
	h := u.Hostname()
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func newResourceEntry(uri, metadataURL, metadataPath string) (*resourceEntry, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" || u.Fragment != "" || strings.Contains(uri, "#") || u.User != nil || !secureOrLoopback(u) {
		return nil, fmt.Errorf("auth: resource %q must be an absolute https URI without fragment (http only on loopback)", uri)
	}
	if u.Scheme != strings.ToLower(u.Scheme) || u.Host != strings.ToLower(u.Host) {
		return nil, fmt.Errorf("auth: resource %q is not canonical: lower-case its scheme and host", uri)
	}
	e := &resourceEntry{uri: uri, host: u.Host}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	wk := MetadataPathPrefix + path
	e.docPaths = []string{wk}
	e.metaURL = u.Scheme + "://" + u.Host + wk
	if metadataURL != "" {
		mu, err := url.Parse(metadataURL)
		if err != nil || mu.Host == "" || mu.Fragment != "" || !secureOrLoopback(mu) {
			return nil, fmt.Errorf("auth: MetadataURL %q must be an absolute https URL", metadataURL)
		}
		e.metaURL = metadataURL
		p := mu.EscapedPath()
		if metadataPath != "" {
			p = metadataPath
		}
		if p != wk {
			e.docPaths = append(e.docPaths, p)
		}
	}
	return e, nil
}

func copyScopeMap(m map[string][]string) map[string][]string {
	if m == nil {
		return nil
	}
	out := make(map[string][]string, len(m))
	for k, v := range m {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// MetadataURL returns the URL of the protected resource metadata document
// for the first resource, as challenges name it.
func (rs *Resource) MetadataURL() string { return rs.resources[0].metaURL }

// pick returns the resource a request is for: the only one, or the one whose
// host matches r.Host.
func (rs *Resource) pick(r *http.Request) *resourceEntry {
	if len(rs.resources) == 1 {
		return rs.resources[0]
	}
	for _, e := range rs.resources {
		if strings.EqualFold(e.host, r.Host) {
			return e
		}
	}
	return nil
}

var errMisdirected = (&core.Error{Code: core.CodeInvalidRequest, Message: "Misdirected Request: unknown host"}).
	WithHTTP(http.StatusMisdirectedRequest, nil)

// Metadata implements [core.Authenticator]: the RFC 9728 document at the
// well-known path derived from the resource, and at MetadataURL's path.
func (rs *Resource) Metadata(r *http.Request) ([]byte, error) {
	p := r.URL.EscapedPath()
	if !strings.HasPrefix(p, MetadataPathPrefix) && !rs.hasExtraPath(p) {
		return nil, nil
	}
	e := rs.pick(r)
	if e == nil {
		return nil, errMisdirected
	}
	for _, dp := range e.docPaths {
		if p == dp {
			return e.doc, nil
		}
	}
	if strings.HasPrefix(p, MetadataPathPrefix) {
		return nil, (&core.Error{Code: core.CodeInvalidRequest, Message: "Not Found: no such metadata document"}).
			WithHTTP(http.StatusNotFound, nil)
	}
	return nil, nil
}

func (rs *Resource) hasExtraPath(p string) bool {
	for _, e := range rs.resources {
		for _, dp := range e.docPaths[1:] {
			if p == dp {
				return true
			}
		}
	}
	return false
}

// Authenticate implements [core.Authenticator]: it verifies the bearer token
// and returns a context carrying its [TokenInfo] and a [core.Principal], or
// the 400, 401, 403, 421 or 503 error to answer with.
func (rs *Resource) Authenticate(r *http.Request) (context.Context, error) {
	e := rs.pick(r)
	if e == nil {
		return nil, errMisdirected
	}
	ctx := r.Context()
	if r.URL.RawQuery != "" && r.URL.Query().Has("access_token") {
		return nil, rs.challenge(e, http.StatusBadRequest, "invalid_request", "access tokens are accepted only in the Authorization header", nil, errMalformed)
	}
	tok, err := ParseAuthorization(r.Header.Values("Authorization"))
	if err != nil {
		return nil, rs.challenge(e, http.StatusBadRequest, "invalid_request", "malformed Authorization header", nil, err)
	}
	if tok == "" {
		return nil, rs.challenge(e, http.StatusUnauthorized, "", "", rs.required, ErrNoToken)
	}
	info, err := rs.verify(ctx, e, tok)
	if err != nil {
		if errors.Is(err, errUnavailable) {
			if ctx.Err() != nil {
				// The client went away while the request waited.
				rs.log.DebugContext(ctx, "request ended while waiting for the authorization server", "error", err.Error())
			} else {
				rs.log.WarnContext(ctx, "authorization server unavailable", "error", err.Error())
			}
			return nil, rs.unavailable(err)
		}
		return nil, rs.challenge(e, http.StatusUnauthorized, "invalid_token", "the access token is invalid", rs.required, err)
	}
	if !hasAll(info.Scopes, rs.required) {
		return nil, rs.challenge(e, http.StatusForbidden, "insufficient_scope", "the access token lacks required scopes", rs.required, ErrInsufficientScope)
	}
	info.entry = e
	ctx = context.WithValue(ctx, tokenInfoKey{}, info)
	return core.NewContextWithPrincipal(ctx, &core.Principal{
		Issuer: info.Issuer, ClientID: info.ClientID, Subject: info.Subject, Scopes: info.Scopes,
	}), nil
}

// Authorize implements [core.Authenticator]: the caller must hold every
// scope the operation needs (Required, ToolScopes or PromptScopes, and
// Scopes), or it gets 403 insufficient_scope naming all of them. A
// completion/complete of a prompt's argument needs the prompt's
// PromptScopes. The operation's scopes are kept with the caller's token for
// RequireScopes.
func (rs *Resource) Authorize(ctx context.Context, op core.Operation) error {
	info := TokenInfoFromContext(ctx)
	if info == nil || info.state == nil {
		return errors.New("auth: Authorize without Authenticate")
	}
	var extra []string
	switch op.Method {
	case "tools/call":
		extra = rs.toolScopes[op.Name]
	case "prompts/get":
		extra = rs.promptScopes[op.Name]
	case "completion/complete":
		if op.Ref == "ref/prompt" {
			extra = rs.promptScopes[op.Name]
		}
	}
	var dyn []string
	if rs.scopesFn != nil {
		dyn = rs.scopesFn(ctx, op)
	}
	// core authorizes each operation just before its handler runs, and the
	// operations of one HTTP request one after another: the last operation
	// authorized is the one whose handler may call RequireScopes.
	if len(extra) > 0 || len(dyn) > 0 {
		info.state.op.Store(&opScopes{static: extra, dynamic: dyn})
	} else {
		info.state.op.Store(nil)
	}
	if hasAll(info.Scopes, extra) && hasAll(info.Scopes, dyn) {
		return nil
	}
	need := union(rs.required, extra, dyn)
	return rs.challenge(info.entry, http.StatusForbidden, "insufficient_scope",
		"the operation needs scopes the access token lacks", need, ErrInsufficientScope)
}

// RequireScopes returns nil when the caller's token grants every scope of
// scopes (directly or implied), and otherwise the 403 insufficient_scope
// error a tool handler returns to ask the client for a step-up
// authorization (2026-07-28 basic/authorization §Scope Challenge Handling).
// The challenge names every scope the call needs, so that a token granting
// exactly those passes: the Required scopes, those of the operation
// (ToolScopes or PromptScopes, and Options.Scopes) and scopes. Return it
// before sending any notification, or it cannot carry its HTTP status.
// Without a token in ctx (no Resource in front of the handler) it returns
// an error.
func RequireScopes(ctx context.Context, scopes ...string) error {
	info := TokenInfoFromContext(ctx)
	if info == nil || info.state == nil {
		return core.NewError(core.CodeInternalError, "Internal error: no authenticated caller")
	}
	if hasAll(info.Scopes, scopes) {
		return nil
	}
	rs := info.state.res
	need := rs.required
	if op := info.state.op.Load(); op != nil {
		need = union(need, op.static, op.dynamic)
	}
	return rs.challenge(info.entry, http.StatusForbidden, "insufficient_scope",
		"the operation needs scopes the access token lacks", union(need, scopes), ErrInsufficientScope)
}

// Sentinel errors, the Cause of the *core.Error answers (errors.Is).
var (
	// ErrNoToken: the request carried no bearer token.
	ErrNoToken = errors.New("auth: no bearer token")
	// ErrInvalidToken: the token failed verification.
	ErrInvalidToken = errors.New("auth: invalid token")
	// ErrInsufficientScope: the token lacks scopes the operation needs.
	ErrInsufficientScope = errors.New("auth: insufficient scope")
	// ErrUnavailable: the authorization server (JWKS, metadata,
	// introspection) could not be reached.
	ErrUnavailable = errUnavailable
)

// challenge builds the error answered with status and a Bearer challenge
// (RFC 6750 §3; 2026-07-28 basic/authorization §Error Handling).
func (rs *Resource) challenge(e *resourceEntry, status int, code, desc string, scopes []string, cause error) *core.Error {
	params := []mcp.AuthParam{{Name: "resource_metadata", Value: e.metaURL}}
	if len(scopes) > 0 {
		params = append(params, mcp.AuthParam{Name: "scope", Value: strings.Join(scopes, " ")})
	}
	if code != "" {
		params = append(params, mcp.AuthParam{Name: "error", Value: code}, mcp.AuthParam{Name: "error_description", Value: desc})
	}
	msg := "Unauthorized"
	switch status {
	case http.StatusBadRequest:
		msg = "Bad Request: " + desc
	case http.StatusForbidden:
		msg = "Forbidden: " + desc
	}
	ce := &core.Error{Code: core.CodeInvalidRequest, Message: msg, Cause: cause}
	return ce.WithHTTP(status, http.Header{"Www-Authenticate": {mcp.FormatChallenge("Bearer", params...)}})
}

// unavailable is the 503 answer when the authorization server fails.
func (rs *Resource) unavailable(cause error) *core.Error {
	ce := &core.Error{Code: core.CodeInternalError, Message: "Service Unavailable: the authorization server cannot be reached", Cause: cause}
	return ce.WithHTTP(http.StatusServiceUnavailable, http.Header{"Retry-After": {rs.retryAfter}})
}

// verify checks tok and returns the caller. A JWT goes to the issuer named
// by its iss; opaque tokens go to the introspecting issuer, if any.
func (rs *Resource) verify(ctx context.Context, e *resourceEntry, tok string) (*TokenInfo, error) {
	if len(tok) > maxTokenBytes {
		return nil, fmt.Errorf("%w: token too long", ErrInvalidToken)
	}
	now := time.Now()
	var is *issuer
	key := sha256.Sum256([]byte(tok))
	c := rs.jwtCache.get(key, now)
	if c != nil {
		is = rs.issuers[c.iss]
		return rs.tokenInfo(e, is, c, tok, now)
	}
	h, jc, err := splitJWT(tok, defaultClaimNames)
	switch {
	case errors.Is(err, errNotJWT):
		if rs.introspector == nil {
			return nil, fmt.Errorf("%w: not a JWT", ErrInvalidToken)
		}
		is = rs.introspector
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	default:
		is = rs.issuers[jc.iss]
		if is == nil {
			return nil, fmt.Errorf("%w: unknown issuer", ErrInvalidToken)
		}
	}
	if is.intro != nil {
		c, err = is.intro.introspect(ctx, tok, key, now)
		if err != nil {
			return nil, err
		}
		if c == nil {
			return nil, fmt.Errorf("%w: inactive", ErrInvalidToken)
		}
		if c.iss != is.name {
			return nil, fmt.Errorf("%w: introspection names another issuer", ErrInvalidToken)
		}
	} else {
		if c, err = rs.verifyJWT(ctx, is, tok, h, jc, now); err != nil {
			return nil, err
		}
		expires := now.Add(is.jwksTTL)
		if c.hasExp && c.exp.Before(expires) {
			expires = c.exp
		}
		rs.jwtCache.put(key, c, expires, now)
	}
	return rs.tokenInfo(e, is, c, tok, now)
}

// tokenInfo applies the time and audience checks to verified claims and
// describes the caller.
func (rs *Resource) tokenInfo(e *resourceEntry, is *issuer, c *claims, tok string, now time.Time) (*TokenInfo, error) {
	if err := rs.checkClaims(e, c, now); err != nil {
		return nil, err
	}
	st := &callState{res: rs}
	st.info = TokenInfo{
		Issuer:   is.name,
		ClientID: c.client,
		Subject:  c.sub,
		Scopes:   rs.implies.expand(c.scopes),
		Audience: c.aud,
		Expiry:   c.exp,
		Claims:   c.all,
		Token:    Token(tok),
		state:    st,
	}
	return &st.info, nil
}

// verifyJWT checks the signature of a JWT against the issuer's keys, then
// decodes its claims with the issuer's claim names.
func (rs *Resource) verifyJWT(ctx context.Context, is *issuer, tok string, h jwtHeader, jc *claims, now time.Time) (*claims, error) {
	if len(h.Crit) > 0 {
		return nil, fmt.Errorf("%w: unsupported crit header", ErrInvalidToken)
	}
	if is.types != nil {
		ok := false
		t := normType(h.Typ)
		for _, want := range is.types {
			if t == want {
				ok = true
				break
			}
		}
		if !ok {
			return nil, fmt.Errorf("%w: typ %q not accepted", ErrInvalidToken, h.Typ)
		}
	}
	switch h.Alg {
	case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA":
	default:
		return nil, fmt.Errorf("%w: alg %q not accepted", ErrInvalidToken, h.Alg)
	}
	keys, err := is.keys.lookup(ctx, h.Kid, h.Alg, now)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no key fits kid %q and alg %s", ErrInvalidToken, h.Kid, h.Alg)
	}
	var payload []byte
	for _, k := range keys {
		if payload, err = jws.Verify([]byte(tok), jws.WithKey(jwa.SignatureAlgorithm(h.Alg), k.raw)); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: signature", ErrInvalidToken)
	}
	c := jc // the verified payload is the one splitJWT decoded
	if is.names != defaultClaimNames {
		if c, err = parseClaims(payload, is.names); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidToken, err)
		}
	}
	if c.iss != is.name {
		return nil, fmt.Errorf("%w: iss", ErrInvalidToken)
	}
	return c, nil
}

// checkClaims applies the time and audience rules to verified claims.
func (rs *Resource) checkClaims(e *resourceEntry, c *claims, now time.Time) error {
	if !c.hasExp {
		return fmt.Errorf("%w: no exp", ErrInvalidToken)
	}
	if !now.Before(c.exp.Add(rs.leeway)) {
		return fmt.Errorf("%w: expired", ErrInvalidToken)
	}
	if !c.nbf.IsZero() && now.Add(rs.leeway).Before(c.nbf) {
		return fmt.Errorf("%w: not yet valid", ErrInvalidToken)
	}
	if !c.iat.IsZero() && now.Add(rs.leeway).Before(c.iat) {
		return fmt.Errorf("%w: issued in the future", ErrInvalidToken)
	}
	for _, a := range c.aud {
		for _, want := range e.audiences {
			if a == want {
				return nil
			}
		}
	}
	return fmt.Errorf("%w: audience", ErrInvalidToken)
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
