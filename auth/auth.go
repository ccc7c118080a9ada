package auth

import (
	"context"
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

	"github.com/mcpfn/mcpfn/core"
)

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
	audiences       []string // accepted besides the resource's audiences
}

// resourceEntry is one canonical resource and where its metadata lives.
type resourceEntry struct {
	uri       string
	htu       string // uri as RFC 9449 §4.3 compares a proof's htu (normalURL)
	host      string // lower-cased host[:port]
	docPaths  []string
	metaURL   string // the URL named by challenges
	doc       []byte
	audiences []string
}

// ProtectedResource is an OAuth 2.1 protected resource (RFC 9728): a
// [core.Authenticator] that verifies bearer tokens, checks scopes per
// operation, answers with RFC 6750 challenges and serves RFC 9728 metadata.
// Set it as core.ServerOptions.Authenticator. It is safe for concurrent use.
type ProtectedResource struct {
	resources    []*resourceEntry
	issuers      map[string]*issuer
	introspector *issuer // the issuer using introspection, or nil
	required     []string
	toolScopes   map[string][]string
	promptScopes map[string][]string
	scopesFn     func(context.Context, core.Operation) []string
	hide         bool // Options.HideUnauthorized
	implies      implications
	jwtCache     tokenCache
	leeway       time.Duration
	retryAfter   string
	log          *slog.Logger
	dpop         *dpopConfig // nil: Bearer tokens only
}

var (
	_ core.Authenticator  = (*ProtectedResource)(nil)
	_ core.ListAuthorizer = (*ProtectedResource)(nil)
)

// New validates opts and returns the protected resource. Bad configuration
// (no issuer, a non-canonical resource URI, an invalid scope, offline_access,
// two introspecting issuers) is an error, and so is a nil opts: a protected
// resource has no default Resource or Issuers.
func New(opts *Options) (*ProtectedResource, error) {
	if opts == nil {
		return nil, errors.New("auth: nil Options: Resource and Issuers are required")
	}
	r := &ProtectedResource{
		required:     append([]string(nil), opts.Required...),
		toolScopes:   copyScopeMap(opts.ToolScopes),
		promptScopes: copyScopeMap(opts.PromptScopes),
		scopesFn:     opts.Scopes,
		hide:         opts.HideUnauthorized,
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
	if opts.DPoP != nil {
		d, err := newDPoPConfig(opts.DPoP)
		if err != nil {
			return nil, err
		}
		r.dpop = d
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
			// RFC 9728 §2: the proof algorithms accepted, and whether
			// only DPoP-bound tokens are.
			DPoPAlgs     []string `json:"dpop_signing_alg_values_supported,omitempty"`
			DPoPRequired bool     `json:"dpop_bound_access_tokens_required,omitempty"`
		}{Resource: e.uri, AuthorizationServers: issNames, ScopesSupported: supported, BearerMethodsSupported: []string{"header"}, ResourceName: opts.ResourceName}
		if r.dpop != nil {
			doc.DPoPAlgs, doc.DPoPRequired = r.dpop.algsSlice, r.dpop.required
		}
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
		audiences:       append([]string(nil), ic.Audiences...),
	}
	for _, a := range is.audiences {
		if a == "" {
			return nil, fmt.Errorf("auth: issuer %q: empty audience", ic.Issuer)
		}
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
