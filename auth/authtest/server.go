package oauthtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
)

// Options configures New. A nil *Options means defaults.
type Options struct {
	// IssuerPath is appended to the server URL to form the issuer, e.g.
	// "/tenant1". Empty means the issuer is the server URL.
	IssuerPath string
	// OpaqueTokens makes /token issue opaque access tokens (known only to
	// introspection) instead of JWTs.
	OpaqueTokens bool
	// Alg is the algorithm of access tokens from /token: "RS256" (default)
	// or "ES256".
	Alg string
	// TokenTTL is the lifetime of access tokens from /token. Zero means one
	// hour.
	TokenTTL time.Duration
	// Scopes is the metadata's scopes_supported.
	Scopes []string
	// JWKSURI is the jwks_uri the metadata names. Empty means the
	// server's own JWKS (Issuer + "/jwks").
	JWKSURI string
	// TLS serves https (httptest.NewTLSServer) instead of http; Client
	// trusts the server's certificate.
	TLS bool

	// MetadataPath, when set, is the one path that serves the metadata
	// (such as "/.well-known/openid-configuration", or the issuer path
	// followed by it); every other well-known path answers 404. Empty
	// serves every form.
	MetadataPath string
	// Metadata replaces members of the metadata document; a nil value
	// removes the member. It changes what the document says (a wrong
	// issuer, no code_challenge_methods_supported, no
	// registration_endpoint), not what the endpoints do.
	Metadata map[string]any
	// AuthMethods is token_endpoint_auth_methods_supported: the client
	// authentication methods /register grants, out of none,
	// client_secret_basic, client_secret_post and private_key_jwt. Nil
	// means none and client_secret_basic.
	AuthMethods []string
	// ClientIDMetadataDocuments makes the server accept Client ID Metadata
	// Documents (draft-ietf-oauth-client-id-metadata-document): a client_id
	// that is an https URL with a path (or an http URL on a loopback host)
	// is fetched with HTTPClient, and the document, whose client_id must be
	// that URL, names the redirect URIs of a public client. The metadata
	// says client_id_metadata_document_supported.
	ClientIDMetadataDocuments bool
	// HTTPClient fetches Client ID Metadata Documents. Nil means a client
	// on http.DefaultTransport; redirects are never followed, and each
	// fetch is bounded to five seconds and 64 KiB.
	HTTPClient *http.Client
	// IdentityProviders are the servers whose ID-JAGs (Identity Assertion
	// JWT Authorization Grants, draft-ietf-oauth-identity-assertion-authz-grant,
	// as IDJAG issues them) the jwt-bearer grant (RFC 7523) accepts.
	IdentityProviders []*Server
	// Iss returns the iss parameter of authorization responses (RFC 9207
	// §2) for the server's issuer; "" omits it. Nil sends the issuer.
	Iss func(issuer string) string
	// AuthorizeError, when set, answers every authorization request that
	// names a known client and redirect URI with this error code
	// (RFC 6749 §4.1.2.1), as if the user refused: "access_denied".
	AuthorizeError string
	// TokenError is asked about each token request, by its form, before
	// the server handles it: a non-nil answer is sent instead.
	TokenError func(form url.Values) *TokenError
}

// TokenError is an error answer of the token endpoint (RFC 6749 §5.2).
type TokenError struct {
	// Status is the HTTP status; 0 means 400.
	Status int
	// Code is the error code; "" means invalid_grant.
	Code string
	// RetryAfter, when positive, is sent as a Retry-After header (seconds).
	RetryAfter int
}

// Endpoint names one endpoint of the server, for Hold, SetRedirect and
// Requests.
type Endpoint string

// The endpoints of the server.
const (
	// EndpointMetadata is RFC 8414 metadata and OpenID Connect discovery
	// (every form; Requests also lists the well-known paths that answered
	// 404).
	EndpointMetadata Endpoint = "metadata"
	// EndpointJWKS is the JWKS.
	EndpointJWKS Endpoint = "jwks"
	// EndpointIntrospection is RFC 7662 introspection.
	EndpointIntrospection Endpoint = "introspection"
	// EndpointAuthorization is the authorization endpoint.
	EndpointAuthorization Endpoint = "authorization"
	// EndpointToken is the token endpoint.
	EndpointToken Endpoint = "token"
	// EndpointRegistration is RFC 7591 dynamic client registration.
	EndpointRegistration Endpoint = "registration"
)

// Request is a request an endpoint received, as Requests lists it.
type Request struct {
	// Path is the request's path.
	Path string
	// Form is the query of a GET, or the form of a POST with a form body.
	Form url.Values
	// Authorization is the request's Authorization header.
	Authorization string
	// JSON is the decoded body of a POST with a JSON object body (a
	// registration).
	JSON map[string]any
}

// maxLogged bounds the requests Requests keeps per endpoint; older ones are
// dropped (a long-running cmd/oauthtest must not grow without bound).
const maxLogged = 4096

// MovedPrefix is the path prefix under which SetRedirect's targets are
// served: a redirected endpoint answers 307 Temporary Redirect to
// URL + MovedPrefix + its path, where the real endpoint answers (and counts
// the request in Moved).
const MovedPrefix = "/moved"

// Claims describes a token to mint.
type Claims struct {
	// Issuer overrides iss; empty means the server's issuer.
	Issuer string
	// Subject is sub; empty means "user-1".
	Subject string
	// ClientID is client_id; empty means "client-1".
	ClientID string
	// Audience is aud (omitted when empty).
	Audience []string
	// Scope is the space-separated scope claim.
	Scope string
	// Expiry is exp; zero means an hour from now. NoExpiry omits it.
	Expiry   time.Time
	NoExpiry bool
	// NotBefore and IssuedAt are nbf and iat; zero omits nbf and sets iat to
	// now.
	NotBefore, IssuedAt time.Time
	// Extra holds further claims (they override the above; a nil value
	// removes the claim).
	Extra map[string]any
}

// MintOptions changes how MintWith signs.
type MintOptions struct {
	// Alg is "RS256" (default), "ES256", or any other value to sign with
	// Key under that name.
	Alg string
	// Kid overrides the kid header; "-" omits it.
	Kid string
	// Typ overrides the typ header (default "at+jwt"); "-" omits it.
	Typ string
	// Key signs instead of the current key of Alg's type (a key the JWKS
	// does not publish, or []byte for HMAC).
	Key any
	// Header holds extra protected header members.
	Header map[string]any
}

// keyPair is a signing key. An RSA key is generated on first use: a
// 2048-bit key takes about 100 ms (more under the race detector), which
// a test that only needs EC keys or opaque tokens should not pay.
type keyPair struct {
	kid string
	gen func() crypto.Signer

	mu   sync.Mutex
	priv crypto.Signer // nil until generated
}

// key returns the private key, generating it if needed.
func (k *keyPair) key() crypto.Signer {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.priv == nil {
		k.priv = k.gen()
	}
	return k.priv
}

// generated returns the private key, or nil if it was never needed (so
// nothing was signed with it).
func (k *keyPair) generated() crypto.Signer {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.priv
}

type generation struct{ rsa, ec *keyPair }

type grant struct {
	client, redirect, challenge, scope, resource, subject string
	expires                                               time.Time
}

// client is a registered client.
type client struct {
	redirects []string
	method    string // token endpoint authentication method
	secret    string
	key       crypto.PublicKey
	idjag     map[string]string // audience issuer -> client_id of the ID-JAGs issued for it
}

type opaque struct {
	claims  map[string]any
	expires time.Time
}

// Server is a running authorization server.
type Server struct {
	// URL is the base URL of the HTTP server.
	URL string
	// Issuer is the issuer identifier (URL + IssuerPath).
	Issuer string
	// IntrospectionClientID and IntrospectionSecret authenticate calls to
	// /introspect.
	IntrospectionClientID, IntrospectionSecret string

	opts Options
	ts   *httptest.Server

	mu       sync.Mutex
	gens     []generation // newest first; at most two
	codes    map[string]grant
	refresh  map[string]grant
	opaque   map[string]opaque
	clients  map[string]*client
	log      map[Endpoint][]Request
	revoked  map[string]bool
	intDown  atomic.Bool
	jwksDown atomic.Bool
	holds    map[Endpoint]*Hold
	redirect map[Endpoint]bool
	introOf  map[string]int64 // introspections by token
	issued   []string         // access tokens /token issued, for RevokeIssued

	jwksFetches, introspections, metadataFetches, moved atomic.Int64
	seq                                                 atomic.Int64
	handler                                             http.Handler
}

// New starts a server on a loopback port. Close stops it.
func New(opts *Options) *Server {
	s := &Server{
		IntrospectionClientID: "resource-server",
		IntrospectionSecret:   "resource-secret:with/odd chars",
		codes:                 map[string]grant{},
		refresh:               map[string]grant{},
		opaque:                map[string]opaque{},
		clients:               map[string]*client{},
		log:                   map[Endpoint][]Request{},
		revoked:               map[string]bool{},
		holds:                 map[Endpoint]*Hold{},
		redirect:              map[Endpoint]bool{},
		introOf:               map[string]int64{},
	}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Alg == "" {
		s.opts.Alg = "RS256"
	}
	if s.opts.TokenTTL == 0 {
		s.opts.TokenTTL = time.Hour
	}
	if s.opts.AuthMethods == nil {
		s.opts.AuthMethods = []string{"none", "client_secret_basic"}
	}
	s.gens = []generation{newGeneration(1)}
	s.handler = s.routes()
	if s.opts.TLS {
		s.ts = httptest.NewTLSServer(s.handler)
	} else {
		s.ts = httptest.NewServer(s.handler)
	}
	s.URL = s.ts.URL
	s.Issuer = s.URL + s.opts.IssuerPath
	return s
}

// Close stops the server.
func (s *Server) Close() { s.ts.Close() }

// Client returns an *http.Client for the server (trusting its certificate
// with Options.TLS).
func (s *Server) Client() *http.Client { return s.ts.Client() }

// Handler returns the server's HTTP handler, to serve it over another
// listener (an in-memory network inside a testing/synctest bubble). URLs in
// its documents still name URL.
func (s *Server) Handler() http.Handler { return s.handler }

func newGeneration(n int) generation {
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return generation{
		rsa: &keyPair{kid: fmt.Sprintf("rsa-%d", n), gen: func() crypto.Signer {
			rk, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			return rk
		}},
		ec: &keyPair{kid: fmt.Sprintf("ec-%d", n), priv: ek},
	}
}

// Rotate makes a new RSA and EC key current. The previous keys stay in the
// JWKS until the next rotation.
func (s *Server) Rotate() {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := newGeneration(int(s.seq.Add(1)) + 1)
	s.gens = append([]generation{g}, s.gens[0])
}

// Kids returns the key ids of the current RSA and EC keys.
func (s *Server) Kids() (rsaKid, ecKid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gens[0].rsa.kid, s.gens[0].ec.kid
}

// SetIntrospectionDown makes /introspect answer 503 (an outage) or recover.
func (s *Server) SetIntrospectionDown(down bool) { s.intDown.Store(down) }

// SetJWKSDown makes the JWKS and metadata endpoints answer 503 or recover.
func (s *Server) SetJWKSDown(down bool) { s.jwksDown.Store(down) }

// JWKSFetches counts the JWKS requests served: a held request counts once
// released, a redirect answer does not count (its target, under
// MovedPrefix, counts here and in Moved).
func (s *Server) JWKSFetches() int64 { return s.jwksFetches.Load() }

// Introspections counts the introspection requests served (as JWKSFetches).
func (s *Server) Introspections() int64 { return s.introspections.Load() }

// IntrospectionsOf counts the introspection requests served for tok
// (authenticated ones: those whose token the server read).
func (s *Server) IntrospectionsOf(tok string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.introOf[tok]
}

// MetadataFetches counts the metadata requests served (as JWKSFetches).
func (s *Server) MetadataFetches() int64 { return s.metadataFetches.Load() }

// Moved counts the requests that reached a redirect target (MovedPrefix).
func (s *Server) Moved() int64 { return s.moved.Load() }

// SetRedirect makes e answer 307 Temporary Redirect to URL + MovedPrefix +
// the request's path, where the real endpoint answers, or stops doing so.
func (s *Server) SetRedirect(e Endpoint, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.redirect[e] = on
}

// Hold holds the requests to one endpoint until Release: each waits, and
// is served once released, or gives up when its client goes away.
type Hold struct {
	s       *Server
	e       Endpoint
	arrived chan struct{}
	left    chan struct{}
	release chan struct{}
	once    sync.Once

	served, abandoned atomic.Int64
}

// Hold makes requests to e wait until the returned Hold is released (tests
// of a request in flight). Holding an endpoint again replaces the previous
// Hold, which keeps its waiting requests.
func (s *Server) Hold(e Endpoint) *Hold {
	h := &Hold{s: s, e: e, arrived: make(chan struct{}, 1024), left: make(chan struct{}, 1024), release: make(chan struct{})}
	s.mu.Lock()
	s.holds[e] = h
	s.mu.Unlock()
	return h
}

// Arrived receives once for each request that starts waiting (up to 1024
// unread).
func (h *Hold) Arrived() <-chan struct{} { return h.arrived }

// Left receives once for each held request that stops waiting, released
// or abandoned (up to 1024 unread), after Served or Abandoned counts it.
func (h *Hold) Left() <-chan struct{} { return h.left }

// Release lets the waiting requests proceed and stops holding the
// endpoint. It may be called more than once.
func (h *Hold) Release() {
	h.once.Do(func() {
		h.s.mu.Lock()
		if h.s.holds[h.e] == h {
			delete(h.s.holds, h.e)
		}
		h.s.mu.Unlock()
		close(h.release)
	})
}

// Served counts the held requests that were released and served.
func (h *Hold) Served() int64 { return h.served.Load() }

// Abandoned counts the held requests whose client went away first.
func (h *Hold) Abandoned() int64 { return h.abandoned.Load() }

// wait holds r while h is held; it reports whether r is to be served.
func (h *Hold) wait(r *http.Request) bool {
	select {
	case h.arrived <- struct{}{}:
	default:
	}
	served := false
	select {
	case <-h.release:
		h.served.Add(1)
		served = true
	case <-r.Context().Done():
		h.abandoned.Add(1)
	}
	select {
	case h.left <- struct{}{}:
	default:
	}
	return served
}

// gate applies SetRedirect and Hold to the requests of endpoint e.
func (s *Server) gate(e Endpoint, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		redirect, h := s.redirect[e], s.holds[e]
		s.mu.Unlock()
		if redirect {
			http.Redirect(w, r, s.URL+MovedPrefix+r.URL.RequestURI(), http.StatusTemporaryRedirect)
			return
		}
		if h != nil && !h.wait(r) {
			return
		}
		next(w, r)
	}
}

// RefreshToken returns a refresh token for c's client, subject, scope and
// first audience (the resource), as /token would issue; it is good for one
// refresh_token grant, and introspection answers it active with token_type
// "refresh_token".
func (s *Server) RefreshToken(c Claims) string {
	m := s.claimsMap(c)
	g := grant{client: fmt.Sprint(m["client_id"]), subject: fmt.Sprint(m["sub"]), scope: c.Scope}
	if len(c.Audience) > 0 {
		g.resource = c.Audience[0]
	}
	rt := randomString(24)
	s.mu.Lock()
	s.refresh[rt] = g
	s.mu.Unlock()
	return rt
}

// Revoke makes introspection answer inactive for tok.
func (s *Server) Revoke(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoked[tok] = true
}

// RevokeIssued revokes (as Revoke) every access token /token has issued so
// far; refresh tokens stay valid.
func (s *Server) RevokeIssued() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tok := range s.issued {
		s.revoked[tok] = true
	}
	s.issued = nil
}

// claimsMap turns c into JWT claims.
func (s *Server) claimsMap(c Claims) map[string]any {
	now := time.Now()
	m := map[string]any{
		"iss":       s.Issuer,
		"sub":       "user-1",
		"client_id": "client-1",
		"iat":       now.Unix(),
		"exp":       now.Add(time.Hour).Unix(),
		"jti":       randomString(12),
	}
	if c.Issuer != "" {
		m["iss"] = c.Issuer
	}
	if c.Subject != "" {
		m["sub"] = c.Subject
	}
	if c.ClientID != "" {
		m["client_id"] = c.ClientID
	}
	if len(c.Audience) == 1 {
		m["aud"] = c.Audience[0]
	} else if len(c.Audience) > 1 {
		m["aud"] = c.Audience
	}
	if c.Scope != "" {
		m["scope"] = c.Scope
	}
	if !c.Expiry.IsZero() {
		m["exp"] = c.Expiry.Unix()
	}
	if c.NoExpiry {
		delete(m, "exp")
	}
	if !c.NotBefore.IsZero() {
		m["nbf"] = c.NotBefore.Unix()
	}
	if !c.IssuedAt.IsZero() {
		m["iat"] = c.IssuedAt.Unix()
	}
	for k, v := range c.Extra {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

// Mint returns a JWT access token for c, signed RS256 with the current key.
func (s *Server) Mint(c Claims) string { return s.MintWith(c, MintOptions{}) }

// MintWith returns a JWT access token for c signed as o says.
func (s *Server) MintWith(c Claims, o MintOptions) string {
	payload, err := json.Marshal(s.claimsMap(c))
	if err != nil {
		panic(err)
	}
	return s.sign(payload, o)
}

func (s *Server) sign(payload []byte, o MintOptions) string {
	alg := o.Alg
	if alg == "" {
		alg = "RS256"
	}
	s.mu.Lock()
	g := s.gens[0]
	s.mu.Unlock()
	kp := g.rsa
	if strings.HasPrefix(alg, "ES") {
		kp = g.ec
	}
	key, kid := o.Key, kp.kid
	if key == nil {
		key = kp.key()
	}
	if o.Kid != "" {
		kid = o.Kid
	}
	hdr := jws.NewHeaders()
	if kid != "-" {
		hdr.Set(jws.KeyIDKey, kid)
	}
	typ := "at+jwt"
	if o.Typ != "" {
		typ = o.Typ
	}
	if typ != "-" {
		hdr.Set(jws.TypeKey, typ)
	}
	for k, v := range o.Header {
		hdr.Set(k, v)
	}
	b, err := jws.Sign(payload, jws.WithKey(jwa.SignatureAlgorithm(alg), key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		panic(fmt.Sprintf("oauthtest: sign: %v", err))
	}
	return string(b)
}

// Opaque returns an opaque access token for c, known to introspection until
// its expiry.
func (s *Server) Opaque(c Claims) string {
	tok := "opaque-" + randomString(24)
	m := s.claimsMap(c)
	exp := time.Now().Add(time.Hour)
	if v, ok := m["exp"].(int64); ok {
		exp = time.Unix(v, 0)
	}
	s.mu.Lock()
	s.opaque[tok] = opaque{claims: m, expires: exp}
	s.mu.Unlock()
	return tok
}

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// routes serves every endpoint, gated by SetRedirect and Hold, and the same
// endpoints ungated under MovedPrefix (the redirect targets).
func (s *Server) routes() http.Handler {
	mux, moved := http.NewServeMux(), http.NewServeMux()
	handle := func(pattern string, e Endpoint, h http.HandlerFunc) {
		moved.HandleFunc(pattern, h)
		if e != "" {
			h = s.gate(e, h)
		}
		mux.HandleFunc(pattern, h)
	}
	p := s.opts.IssuerPath
	if mp := s.opts.MetadataPath; mp != "" {
		handle("GET "+mp, EndpointMetadata, s.metadata)
	} else {
		handle("GET /.well-known/oauth-authorization-server"+p, EndpointMetadata, s.metadata)
		handle("GET /.well-known/openid-configuration"+p, EndpointMetadata, s.metadata)
		if p != "" {
			handle("GET "+p+"/.well-known/openid-configuration", EndpointMetadata, s.metadata)
		}
	}
	handle("GET "+p+"/jwks", EndpointJWKS, s.jwks)
	handle("GET "+p+"/authorize", EndpointAuthorization, s.authorize)
	handle("POST "+p+"/token", EndpointToken, s.token)
	handle("POST "+p+"/register", EndpointRegistration, s.register)
	handle("POST "+p+"/introspect", EndpointIntrospection, s.introspect)
	// Any other well-known path: 404, listed with the metadata requests
	// (a client's discovery tries several).
	notFound := func(w http.ResponseWriter, r *http.Request) {
		s.record(EndpointMetadata, r, nil)
		http.NotFound(w, r)
	}
	handle("GET /.well-known/", "", notFound)
	if p != "" {
		handle("GET "+p+"/.well-known/", "", notFound)
	}
	strip := http.StripPrefix(MovedPrefix, moved)
	mux.HandleFunc(MovedPrefix+"/", func(w http.ResponseWriter, r *http.Request) {
		s.moved.Add(1)
		strip.ServeHTTP(w, r)
	})
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	s.metadataFetches.Add(1)
	s.record(EndpointMetadata, r, nil)
	if s.jwksDown.Load() {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	is := s.Issuer
	md := map[string]any{
		"issuer":                                         is,
		"authorization_endpoint":                         is + "/authorize",
		"token_endpoint":                                 is + "/token",
		"registration_endpoint":                          is + "/register",
		"introspection_endpoint":                         is + "/introspect",
		"jwks_uri":                                       s.jwksURI(),
		"scopes_supported":                               s.opts.Scopes,
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          s.grantTypes(),
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          s.opts.AuthMethods,
		"authorization_response_iss_parameter_supported": true,
		"subject_types_supported":                        []string{"public"},
		"id_token_signing_alg_values_supported":          []string{"RS256"},
	}
	if len(s.opts.Scopes) == 0 {
		delete(md, "scopes_supported") // RECOMMENDED, but never null
	}
	if s.opts.ClientIDMetadataDocuments {
		md["client_id_metadata_document_supported"] = true
	}
	for k, v := range s.opts.Metadata {
		if v == nil {
			delete(md, k)
		} else {
			md[k] = v
		}
	}
	writeJSON(w, http.StatusOK, md)
}

func (s *Server) jwksURI() string {
	if s.opts.JWKSURI != "" {
		return s.opts.JWKSURI
	}
	return s.Issuer + "/jwks"
}

func (s *Server) jwks(w http.ResponseWriter, r *http.Request) {
	s.jwksFetches.Add(1)
	s.record(EndpointJWKS, r, nil)
	if s.jwksDown.Load() {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	s.mu.Lock()
	gens := append([]generation(nil), s.gens...)
	s.mu.Unlock()
	set := jwk.NewSet()
	for _, g := range gens {
		for _, kp := range []*keyPair{g.rsa, g.ec} {
			k, err := jwk.FromRaw(kp.key().Public())
			if err != nil {
				panic(err)
			}
			k.Set(jwk.KeyIDKey, kp.kid)
			k.Set(jwk.KeyUsageKey, "sig")
			set.AddKey(k)
		}
	}
	writeJSON(w, http.StatusOK, set)
}

func (s *Server) introspect(w http.ResponseWriter, r *http.Request) {
	s.introspections.Add(1)
	s.record(EndpointIntrospection, r, nil)
	if s.intDown.Load() {
		http.Error(w, "introspection is down", http.StatusServiceUnavailable)
		return
	}
	id, secret, ok := r.BasicAuth()
	if ok {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	}
	if !ok || id != s.IntrospectionClientID || secret != s.IntrospectionSecret {
		w.Header().Set("WWW-Authenticate", `Basic realm="introspection"`)
		oauthError(w, http.StatusUnauthorized, "invalid_client", "")
		return
	}
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "")
		return
	}
	tok := r.PostForm.Get("token")
	s.mu.Lock()
	s.introOf[tok]++
	o, known := s.opaque[tok]
	revoked := s.revoked[tok]
	rt, isRefresh := s.refresh[tok]
	s.mu.Unlock()
	if revoked {
		writeJSON(w, http.StatusOK, map[string]any{"active": false})
		return
	}
	if isRefresh {
		// RFC 7662 §2.1: refresh tokens may be introspected too; the answer
		// says what the token is (token_type, as some servers word it).
		out := map[string]any{"active": true, "token_type": "refresh_token", "iss": s.Issuer,
			"client_id": rt.client, "sub": rt.subject, "exp": time.Now().Add(24 * time.Hour).Unix()}
		if rt.scope != "" {
			out["scope"] = rt.scope
		}
		if rt.resource != "" {
			out["aud"] = rt.resource
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	var claims map[string]any
	switch {
	case known && time.Now().Before(o.expires):
		claims = o.claims
	case strings.Count(tok, ".") == 2:
		claims = s.verifyOwn(tok)
	}
	if claims == nil {
		writeJSON(w, http.StatusOK, map[string]any{"active": false})
		return
	}
	out := map[string]any{"active": true, "token_type": "Bearer"}
	for k, v := range claims {
		out[k] = v
	}
	writeJSON(w, http.StatusOK, out)
}

// verifyOwn returns the claims of a JWT this server signed and that has not
// expired, or nil.
func (s *Server) verifyOwn(tok string) map[string]any {
	s.mu.Lock()
	gens := append([]generation(nil), s.gens...)
	s.mu.Unlock()
	for _, g := range gens {
		for _, kp := range []*keyPair{g.rsa, g.ec} {
			priv := kp.generated()
			if priv == nil {
				continue // never used: nothing was signed with it
			}
			alg := jwa.RS256
			if _, ok := priv.(*ecdsa.PrivateKey); ok {
				alg = jwa.ES256
			}
			payload, err := jws.Verify([]byte(tok), jws.WithKey(alg, priv.Public()))
			if err != nil {
				continue
			}
			var m map[string]any
			if json.Unmarshal(payload, &m) != nil {
				return nil
			}
			if exp, ok := m["exp"].(float64); ok && time.Now().Unix() >= int64(exp) {
				return nil
			}
			return m
		}
	}
	return nil
}
