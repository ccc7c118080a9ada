package oauth

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/mcp"
)

// Grant types (RFC 6749, RFC 7523).
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	GrantRefreshToken      = "refresh_token"
	// GrantJWTBearer is the RFC 7523 grant that enterprise-managed
	// authorization uses to trade an ID-JAG for an access token.
	GrantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"
)

// Token endpoint authentication methods (RFC 7591 §2, RFC 7523 §2.2).
const (
	AuthNone              = "none"
	AuthClientSecretBasic = "client_secret_basic"
	AuthClientSecretPost  = "client_secret_post"
	AuthPrivateKeyJWT     = "private_key_jwt"
)

// Client is an OAuth client registered with one authorization server.
type Client struct {
	ID     string
	Secret string // for client_secret_basic / client_secret_post
	// AuthMethod is the token endpoint authentication method; "" picks one
	// from the server's token_endpoint_auth_methods_supported and what the
	// client has (a Key, a Secret, or nothing).
	AuthMethod string
	// Key signs private_key_jwt client assertions (RFC 7523 §2.2): an
	// *ecdsa.PrivateKey (P-256/384/521 → ES256/384/512) or an
	// *rsa.PrivateKey (RS256).
	Key   crypto.Signer
	KeyID string // the JWS kid, if the server needs one
	// Issuer is the issuer identifier of the authorization server the
	// client is registered with. A client from Config.Clients is used only
	// with exactly that issuer (simple string comparison, as RFC 8414 §3.3
	// compares issuers); any other answer fails the flow with
	// ErrClientIssuer, so a Clients function that answers for every issuer
	// cannot hand the secret or key to an authorization server that a
	// hostile resource names. Dynamic registrations carry it themselves.
	Issuer string
}

// Defaults.
const (
	// DefaultRequestTimeout bounds one metadata, registration or token
	// request, answer included (Config.RequestTimeout).
	DefaultRequestTimeout = 30 * time.Second
	// DefaultAuthorizeTimeout bounds the user-agent step of the
	// authorization code flow (Config.AuthorizeTimeout): ten minutes, the
	// longest lifetime RFC 6749 §4.1.2 recommends for an authorization
	// code.
	DefaultAuthorizeTimeout = 10 * time.Minute
)

// AssertionRequest asks the caller for an Identity Assertion JWT
// Authorization Grant (ID-JAG) for enterprise-managed authorization.
type AssertionRequest struct {
	Issuer   string   // the authorization server: the ID-JAG's audience
	Resource string   // the MCP server's resource identifier
	Scopes   []string // the scopes wanted (may be empty)
	ClientID string   // the client the ID-JAG is for
}

// Config configures a Source. The zero value (plus Authorize and
// RedirectURL) runs the authorization code flow with dynamic registration.
type Config struct {
	// HTTPClient does the metadata, registration and token requests; nil
	// means a client on http.DefaultTransport. Redirects are never
	// followed. For a remote flow (see AllowPrivateNetwork) its
	// *http.Transport is cloned and dials through a guard that resolves the
	// host, refuses local addresses and hands only checked IP addresses to
	// the transport's DialContext (a net.Dialer when nil); a Transport of
	// another type, or one with its own TLS dialer, gets the URL checks
	// only.
	HTTPClient *http.Client
	// RequestTimeout bounds each metadata, registration and token request
	// as a whole, from sending it to the last byte of the answer, so an
	// endpoint that dribbles its answer cannot hold the flow. Zero means
	// DefaultRequestTimeout; negative means none. Errors of a request that
	// ran out match client.ErrTimeout and context.DeadlineExceeded.
	RequestTimeout time.Duration
	// AuthorizeTimeout bounds the user-agent step (Authorize) of the
	// authorization code flow. Zero means DefaultAuthorizeTimeout; negative
	// means none (ctx alone).
	AuthorizeTimeout time.Duration
	// AllowPrivateNetwork lets the flow of an MCP endpoint that is not on
	// a loopback host reach loopback, private (RFC 1918, fc00::/7, 100.64/10),
	// link-local (169.254/16, fe80::/10), unspecified and other non-public
	// addresses, as the flow of a loopback endpoint may: for an MCP server
	// and its authorization server inside one private network. Plain http
	// stays limited to loopback hosts. Without it such a flow fetches and
	// posts to https URLs only, whose host neither names nor resolves, when
	// it is dialed, to such an address (ErrLocalAddress).
	AllowPrivateNetwork bool

	// Grant is GrantAuthorizationCode (the default, ""),
	// GrantClientCredentials or GrantJWTBearer (enterprise-managed
	// authorization or workload identity federation, with Assertion).
	Grant string

	// RedirectURL is the redirect URI of the authorization code flow: a
	// loopback http URL or an https URL.
	RedirectURL string
	// Authorize is the user-agent step of the authorization code flow: it
	// takes the user to authURL and returns the query parameters the
	// authorization server redirected back to RedirectURL with (code,
	// state, iss, or error). See Loopback for a browser-based one.
	Authorize func(ctx context.Context, authURL string) (url.Values, error)

	// Clients returns the pre-registered client for an authorization
	// server, by its issuer identifier, if there is one; the client's
	// Issuer must be that issuer (else ErrClientIssuer). Pre-registered
	// clients come first (2026-07-28 basic/authorization/client-registration):
	// of the authorization servers the protected resource metadata lists
	// (RFC 9728 §2), the flow uses the first one Clients has a client
	// bound to, and the first one listed when it has none.
	// The client_credentials and jwt-bearer grants need one.
	Clients func(issuer string) (Client, bool)
	// ClientMetadataURL is this client's Client ID Metadata Document URL
	// (an https URL with a path and no fragment; http only on a loopback
	// host), used as client_id with servers that set
	// client_id_metadata_document_supported. A malformed one fails every
	// challenge with ErrInsecureURL.
	ClientMetadataURL string
	// ClientName is the client_name sent in dynamic registration; "" means
	// "mcpfn".
	ClientName string
	// ApplicationType is sent in dynamic registration; "" means "native"
	// for a loopback RedirectURL and "web" otherwise.
	ApplicationType string

	// Assertion supplies the assertion of the GrantJWTBearer grant: an
	// ID-JAG for enterprise-managed authorization (IDJAG builds one from
	// an identity provider's token exchange), or a workload's platform
	// JWT for workload identity federation (SEP-1933, AssertionFile). It
	// is asked anew for every token; only the access token is kept.
	Assertion func(ctx context.Context, req AssertionRequest) (string, error)

	// DPoP selects sender-constrained tokens (RFC 9449; MCP SEP-1932):
	// DPoPAuto (the default, ""), DPoPOff or DPoPRequire. With DPoP, every
	// token request carries a proof of the Source's key (htm POST, htu the
	// token endpoint), a token issued with token_type DPoP is sent as
	// "Authorization: DPoP <token>" with a fresh proof on every request
	// to the MCP endpoint (htm, htu, ath; client.RequestAuthorizer), and
	// the nonces that the authorization server (400 use_dpop_nonce,
	// §8) and the MCP server (401 use_dpop_nonce, §9) demand are sent in
	// the proofs, the request being sent once more with the new nonce.
	DPoP string
	// DPoPKey is the key DPoP proofs are signed with: an *ecdsa.PrivateKey
	// (P-256/384/521: ES256/384/512), an *rsa.PrivateKey (RS256) or an
	// ed25519.PrivateKey (EdDSA). Nil means a P-256 key the Source
	// generates once, when it first needs one, and keeps in memory only:
	// a token bound to it is of no use to another process, so a Store
	// shared by processes wants a DPoPKey they share.
	DPoPKey crypto.Signer

	// Store, when set, keeps tokens and the dynamic registration across
	// processes. Once a challenge has discovered the protected resource
	// and its authorization server, the Source loads their entry: an
	// unexpired access token is used as it is, an expired one is
	// refreshed (RFC 6749 §6) and the registered client is reused, so no
	// user-agent step is needed. Every token obtained afterwards (a new
	// authorization, a refresh, a step-up) replaces the entry.
	Store Store
}

// Source is a client.TokenSource and client.Challenger that obtains and
// renews OAuth access tokens for one MCP endpoint. It is safe for
// concurrent use.
type Source struct {
	cfg Config
	hc  *http.Client // local flows

	remoteOnce sync.Once
	remote     *http.Client // remote flows: dials through the guard
	hooks      *netHooks    // tests: DNS and network

	flow sync.Mutex // serialises challenges and refreshes

	dpop dpopState // the DPoP key and the servers' nonces

	mu         sync.Mutex // guards the fields below
	local      bool       // the flow may reach local addresses (a loopback endpoint)
	issuer     string     // the authorization server in use
	meta       *ServerMetadata
	resource   string
	registered map[string]Client // dynamic registrations, by issuer
	redirects  map[string]string // the redirect URI of each registration
	loaded     StoreKey          // the key Config.Store was last asked for
	tok        *token
	scopes     []string // the scope set last requested
	backoff    time.Duration
	retryAt    time.Time
}

var (
	_ client.TokenSource = (*Source)(nil)
	_ client.Challenger  = (*Source)(nil)
)

type token struct {
	access  string
	refresh string
	expiry  time.Time // zero: unknown
	dpop    bool      // token_type DPoP: bound to the Source's DPoP key
}

// New returns a Source for cfg, which it copies; a nil cfg is the zero
// Config. It does no I/O: the first 401 starts the discovery. A Source
// serves one MCP endpoint.
func New(cfg *Config) *Source {
	if cfg == nil {
		cfg = &Config{}
	}
	c := http.Client{}
	if cfg.HTTPClient != nil {
		c = *cfg.HTTPClient
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	src := &Source{cfg: *cfg, hc: &c, registered: map[string]Client{}, redirects: map[string]string{}}
	src.dpop.userKey = cfg.DPoPKey
	return src
}

// client returns the HTTP client of a local or a remote flow.
func (s *Source) client(local bool) *http.Client {
	if local {
		return s.hc
	}
	s.remoteOnce.Do(func() { s.remote = remoteClient(s.hc, s.hooks) })
	return s.remote
}

// timeout returns d, or def when d is zero; negative means none (0).
func timeout(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// expirySkew renews tokens this long before they expire.
const expirySkew = 30 * time.Second

// Token returns the current access token, refreshing it first when it is
// about to expire and a refresh token is at hand. Before the first
// challenge it returns "" (no Authorization). If the refresh fails because
// the server is unavailable the old token is returned.
func (s *Source) Token(ctx context.Context) (string, error) {
	s.mu.Lock()
	t := s.tok
	s.mu.Unlock()
	if t == nil {
		return "", nil
	}
	if t.expiry.IsZero() || time.Now().Add(expirySkew).Before(t.expiry) || t.refresh == "" {
		return t.access, nil
	}
	s.flow.Lock()
	defer s.flow.Unlock()
	s.mu.Lock()
	cur := s.tok
	s.mu.Unlock()
	if cur != t { // renewed meanwhile
		if cur == nil {
			return "", nil
		}
		return cur.access, nil
	}
	if s.backingOff() {
		return t.access, nil
	}
	err := s.refresh(ctx, t)
	var oe *OAuthError
	switch {
	case err == nil:
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.tok.access, nil
	case errors.As(err, &oe) && !oe.Temporary():
		// The refresh token is dead: drop the tokens; the server's 401
		// will start a new authorization.
		s.mu.Lock()
		s.tok = nil
		s.mu.Unlock()
		return "", nil
	default:
		s.noteFailure(err)
		return t.access, nil
	}
}

// Challenge answers a 401, or a 403 with error="insufficient_scope", from
// the MCP endpoint: it discovers the authorization server, registers if it
// must, and obtains a new access token. It returns nil when the request
// should be retried with Token. It never retries by itself; the caller
// bounds the attempts.
func (s *Source) Challenge(ctx context.Context, endpoint string, resp *http.Response) error {
	// The MCP server wants a proof with its nonce (RFC 9449 §9): send the
	// request again with it; the client bounds the attempts.
	if s.nonceChallenge(endpoint, resp) {
		return nil
	}
	s.flow.Lock()
	defer s.flow.Unlock()

	// A concurrent challenge may have renewed the token already.
	sent := sentBearer(resp)
	s.mu.Lock()
	cur := s.tok
	s.mu.Unlock()
	if cur != nil && sent != cur.access {
		return nil
	}
	if s.backingOff() {
		return ErrBackoff
	}
	err := s.challenge(ctx, endpoint, resp)
	if err != nil {
		s.noteFailure(err)
		return err
	}
	s.mu.Lock()
	s.backoff = 0
	s.mu.Unlock()
	return nil
}

func (s *Source) challenge(ctx context.Context, endpoint string, resp *http.Response) error {
	ep, err := url.Parse(endpoint)
	if err != nil {
		return err
	}
	// The token would travel in clear to a plain-http endpoint that is not
	// on a loopback host (2026-07-28 basic/authorization
	// §Communication Security).
	if err := checkSecureURL(ep, endpoint); err != nil {
		return fmt.Errorf("oauth: MCP endpoint: %w", err)
	}
	if u := s.cfg.ClientMetadataURL; u != "" {
		if err := checkClientMetadataURL(u); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.local = s.cfg.AllowPrivateNetwork || isLoopbackHost(ep.Hostname())
	s.mu.Unlock()
	params, ok := mcp.BearerChallenge(resp.Header)
	if !ok {
		// A server that accepts only DPoP-bound tokens challenges with
		// the DPoP scheme (RFC 9449 §7.1), resource_metadata included.
		params, _ = dpopChallenge(resp.Header)
	}
	challenged := strings.Fields(params["scope"])
	if len(challenged) > MaxScopes {
		return ErrTooManyScopes
	}
	prm, err := s.fetchResourceMetadata(ctx, ep, params["resource_metadata"])
	if err != nil {
		return err
	}
	issuer := s.pickIssuer(prm.AuthorizationServers)

	s.mu.Lock()
	if s.issuer != issuer {
		// A new authorization server: nothing of the old one is used
		// (2026-07-28 basic/authorization/client-registration
		// §Authorization Server Binding).
		s.issuer, s.meta, s.tok, s.scopes = issuer, nil, nil, nil
	}
	meta := s.meta
	s.resource = prm.Resource
	s.mu.Unlock()

	if meta == nil {
		if meta, err = s.fetchServerMetadata(ctx, issuer); err != nil {
			return err
		}
		s.mu.Lock()
		s.meta = meta
		s.mu.Unlock()
	}
	seeded := s.load(ctx, StoreKey{Resource: prm.Resource, Issuer: issuer}, meta)
	s.mu.Lock()
	prev, old := s.scopes, s.tok
	s.mu.Unlock()

	// Scope selection (2026-07-28 basic/authorization §Scope Selection
	// Strategy, §Step-Up Authorization Flow).
	var scopes []string
	switch {
	case len(challenged) > 0:
		scopes = union(prev, challenged)
	case len(prev) > 0:
		scopes = prev
	default:
		scopes = append([]string(nil), prm.ScopesSupported...)
	}
	if len(scopes) > MaxScopes {
		return ErrTooManyScopes
	}

	stepUp := resp.StatusCode == http.StatusForbidden
	if seeded && !stepUp && subset(scopes, prev) && (old.expiry.IsZero() || time.Now().Add(expirySkew).Before(old.expiry)) {
		// A saved token the server has not seen yet: try it first.
		return nil
	}
	if !stepUp && old != nil && old.refresh != "" && subset(scopes, prev) {
		err := s.refresh(ctx, old)
		if err == nil {
			return nil
		}
		var oe *OAuthError
		if !errors.As(err, &oe) || oe.Temporary() {
			return err
		}
		// invalid_grant and the like: authorize afresh.
	}

	switch s.cfg.Grant {
	case "", GrantAuthorizationCode:
		return s.authorizationCode(ctx, meta, prm.Resource, scopes)
	case GrantClientCredentials:
		return s.clientCredentials(ctx, meta, prm.Resource, scopes)
	case GrantJWTBearer:
		return s.jwtBearer(ctx, meta, prm.Resource, scopes)
	default:
		return errors.New("oauth: unknown grant " + s.cfg.Grant)
	}
}

// pickIssuer chooses the authorization server of the flow among those the
// protected resource metadata lists (RFC 9728 §2: any of them may issue
// tokens for the resource): the first one Config.Clients has a
// pre-registered client bound to (Client.Issuer), else the first one
// listed.
func (s *Source) pickIssuer(servers []string) string {
	if s.cfg.Clients != nil {
		for _, iss := range servers {
			if c, ok := s.cfg.Clients(iss); ok && c.Issuer == iss {
				return iss
			}
		}
	}
	return servers[0]
}

// sentBearer is the access token of the request resp answers, sent with
// the Bearer or the DPoP scheme.
func sentBearer(resp *http.Response) string {
	if resp == nil || resp.Request == nil {
		return ""
	}
	a := resp.Request.Header.Get("Authorization")
	if len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return a[7:]
	}
	if len(a) > 5 && strings.EqualFold(a[:5], "dpop ") {
		return a[5:]
	}
	return ""
}

// Back-off after 503s and transport failures of the authorization server.
const (
	minBackoff = time.Second
	maxBackoff = 5 * time.Minute
)

func (s *Source) backingOff() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Now().Before(s.retryAt)
}

// noteFailure starts or doubles the back-off when err says the server is
// unavailable (503, temporarily_unavailable).
func (s *Source) noteFailure(err error) {
	var oe *OAuthError
	var se *httpStatusError
	var wait time.Duration
	switch {
	case errors.As(err, &oe) && oe.Temporary():
		wait = oe.RetryAfter
	case errors.As(err, &se) && se.status == http.StatusServiceUnavailable:
	default:
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.backoff *= 2
	if s.backoff < minBackoff {
		s.backoff = minBackoff
	}
	if s.backoff > maxBackoff {
		s.backoff = maxBackoff
	}
	if wait < s.backoff {
		wait = s.backoff
	}
	if wait > maxBackoff {
		wait = maxBackoff
	}
	s.retryAt = time.Now().Add(wait)
}

// MaxScopes bounds the scopes of one authorization: a challenge or
// protected resource metadata naming more is refused (ErrTooManyScopes).
const MaxScopes = 256

// union is a followed by the members of b not in a, each once.
func union(a, b []string) []string {
	seen := make(map[string]struct{}, len(a)+len(b))
	out := make([]string, 0, len(a)+len(b))
	for _, l := range [2][]string{a, b} {
		for _, s := range l {
			if _, dup := seen[s]; !dup {
				seen[s] = struct{}{}
				out = append(out, s)
			}
		}
	}
	return out
}

// subset reports whether every member of a is in b.
func subset(a, b []string) bool {
	in := make(map[string]struct{}, len(b))
	for _, s := range b {
		in[s] = struct{}{}
	}
	for _, s := range a {
		if _, ok := in[s]; !ok {
			return false
		}
	}
	return true
}
