package authtest

import (
	"crypto"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
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
	// DPoP makes the server support DPoP (RFC 9449 §5): the metadata
	// lists dpop_signing_alg_values_supported, and a token request with a
	// valid proof (htm POST, htu the token endpoint) gets an access token
	// bound to the proof's key (cnf.jkt) with token_type DPoP; a request
	// without one gets a Bearer token. An invalid proof is answered 400
	// invalid_dpop_proof.
	DPoP bool
	// DPoPNonce, with DPoP, makes the token endpoint demand a nonce
	// (RFC 9449 §8): a proof without the server's current nonce is
	// answered 400 use_dpop_nonce with a DPoP-Nonce header. The nonce is
	// DPoPNonce of Server, RotateDPoPNonce changes it.
	DPoPNonce bool
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
	// DPoP is the request's DPoP header (a proof, RFC 9449 §4).
	DPoP string
	// JSON is the decoded body of a POST with a JSON object body (a
	// registration).
	JSON map[string]any
}

// maxLogged bounds the requests Requests keeps per endpoint; older ones are
// dropped (a long-running cmd/authtest must not grow without bound).
const maxLogged = 4096

// MovedPrefix is the path prefix under which SetRedirect's targets are
// served: a redirected endpoint answers 307 Temporary Redirect to
// URL + MovedPrefix + its path, where the real endpoint answers (and counts
// the request in Moved).
const MovedPrefix = "/moved"

type grant struct {
	client, redirect, challenge, scope, resource, subject string
	expires                                               time.Time
	jkt                                                   string // a DPoP-bound refresh token's key (public clients)
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

	dpopNonce string // guarded by mu

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
	s.dpopNonce = randomString(16)
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
