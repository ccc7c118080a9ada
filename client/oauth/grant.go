package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcpfn/mcpfn/client"
)

// tokenResponse is a successful token endpoint answer (RFC 6749 §5.1).
type tokenResponse struct {
	AccessToken  string          `json:"access_token"`
	TokenType    string          `json:"token_type"`
	ExpiresIn    json.RawMessage `json:"expires_in"`
	RefreshToken string          `json:"refresh_token"`
	Scope        string          `json:"scope"`
	// IssuedTokenType is set by token exchange (RFC 8693 §2.2.1).
	IssuedTokenType string `json:"issued_token_type"`
}

// postForm POSTs form to a token-style endpoint with the client's
// authentication and decodes the JSON answer. Errors are *OAuthError when
// the server answered with an OAuth error (or any non-200 status).
//
// With dpop, the request carries a DPoP proof (RFC 9449 §5) with the
// server's latest nonce, and a DPoP-Nonce of the answer is kept (§8);
// nonce reports whether the answer was a 400 use_dpop_nonce that brought
// one, to send the request again with.
func (s *Source) postForm(ctx context.Context, which, endpoint string, form url.Values, basic *[2]string, dpop bool) (tr *tokenResponse, nonce bool, err error) {
	var extra http.Header
	if dpop {
		p, err := s.dpop.proof(http.MethodPost, endpoint, "")
		if err != nil {
			return nil, false, err
		}
		extra = http.Header{"Dpop": {p}}
	}
	resp, body, err := s.roundTrip(ctx, http.MethodPost, endpoint, []byte(form.Encode()), "application/x-www-form-urlencoded", basic, extra)
	if err != nil {
		return nil, false, err
	}
	fresh := dpop && s.dpop.noteNonce(endpoint, resp.Header)
	if resp.StatusCode != http.StatusOK {
		oe := decodeOAuthError(which, resp, body)
		return nil, fresh && resp.StatusCode == http.StatusBadRequest && oe.Code == "use_dpop_nonce", oe
	}
	tr = new(tokenResponse)
	if err := json.Unmarshal(body, tr); err != nil {
		return nil, false, fmt.Errorf("oauth: %s endpoint: %w", which, err)
	}
	if tr.AccessToken == "" {
		return nil, false, fmt.Errorf("oauth: %s endpoint: no access_token", which)
	}
	return tr, false, nil
}

// decodeOAuthError builds the *OAuthError of a non-200 answer.
func decodeOAuthError(which string, resp *http.Response, body []byte) *OAuthError {
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
		URI         string `json:"error_uri"`
	}
	_ = json.Unmarshal(body, &e)
	oe := &OAuthError{Endpoint: which, StatusCode: resp.StatusCode, Code: e.Error, Description: e.Description, URI: e.URI}
	if err := json.Unmarshal(body, &oe.Fields); err != nil {
		oe.Fields = nil
	}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		if n, err := strconv.Atoi(ra); err == nil && n >= 0 {
			oe.RetryAfter = time.Duration(n) * time.Second
		} else if t, err := http.ParseTime(ra); err == nil {
			oe.RetryAfter = time.Until(t)
		}
	}
	return oe
}

// queryFields is the first value of every parameter of q, as a JSON string.
func queryFields(q url.Values) map[string]json.RawMessage {
	f := make(map[string]json.RawMessage, len(q))
	for k, vs := range q {
		if len(vs) > 0 {
			f[k], _ = json.Marshal(vs[0])
		}
	}
	return f
}

// store keeps the tokens of tr, issued to client c and requested with
// scopes, and saves them in Config.Store.
//
// A token_type of DPoP is accepted only when the request carried a proof
// (dpop): the token is then bound to the Source's key (RFC 9449 §5).
func (s *Source) store(ctx context.Context, c Client, tr *tokenResponse, scopes []string, keepRefresh string, dpop bool) error {
	bound := dpop && strings.EqualFold(tr.TokenType, "dpop")
	switch {
	case bound:
	case s.cfg.DPoP == DPoPRequire:
		return fmt.Errorf("%w (token_type %q)", ErrNotDPoPBound, tr.TokenType)
	case tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "bearer"):
		return fmt.Errorf("oauth: token_type %q is not Bearer", tr.TokenType)
	}
	t := &token{access: tr.AccessToken, refresh: tr.RefreshToken, dpop: bound}
	if t.refresh == "" {
		t.refresh = keepRefresh
	}
	if n, err := strconv.ParseInt(strings.Trim(string(tr.ExpiresIn), `"`), 10, 64); err == nil && n > 0 {
		t.expiry = time.Now().Add(time.Duration(n) * time.Second)
	}
	s.mu.Lock()
	s.tok = t
	if scopes != nil {
		s.scopes = scopes
	}
	s.mu.Unlock()
	s.save(ctx, c)
	return nil
}

// clientFor returns the client to use with the authorization server of
// meta: pre-registered, else an earlier dynamic registration with this
// issuer, else the Client ID Metadata Document URL when the server supports
// it, else a new dynamic registration (2026-07-28
// basic/authorization/client-registration, priority order).
func (s *Source) clientFor(ctx context.Context, meta *ServerMetadata) (Client, error) {
	if c, ok, err := s.preRegistered(meta); ok || err != nil {
		return c, err
	}
	s.mu.Lock()
	c, ok := s.registered[meta.Issuer]
	s.mu.Unlock()
	if ok {
		return c, nil
	}
	if meta.ClientIDMetadataDocumentSupported && s.cfg.ClientMetadataURL != "" {
		return Client{ID: s.cfg.ClientMetadataURL, AuthMethod: AuthNone, Issuer: meta.Issuer}, nil
	}
	if meta.RegistrationEndpoint == "" {
		return Client{}, ErrNoRegistration
	}
	c, err := s.register(ctx, meta)
	if err != nil {
		return Client{}, err
	}
	s.mu.Lock()
	s.registered[meta.Issuer] = c
	s.redirects[meta.Issuer] = s.cfg.RedirectURL
	s.mu.Unlock()
	return c, nil
}

// register performs dynamic client registration (RFC 7591 §3).
func (s *Source) register(ctx context.Context, meta *ServerMetadata) (Client, error) {
	method := AuthNone
	if sup := meta.TokenEndpointAuthMethodsSupported; len(sup) > 0 && !contains(sup, AuthNone) {
		switch {
		case contains(sup, AuthClientSecretBasic):
			method = AuthClientSecretBasic
		case contains(sup, AuthClientSecretPost):
			method = AuthClientSecretPost
		}
	}
	appType := s.cfg.ApplicationType
	if appType == "" {
		appType = "web"
		if u, err := url.Parse(s.cfg.RedirectURL); err == nil && (u.Scheme == "http" && isLoopbackHost(u.Hostname()) || u.Scheme != "https" && u.Scheme != "http") {
			appType = "native"
		}
	}
	name := s.cfg.ClientName
	if name == "" {
		name = "mcpfn"
	}
	body := map[string]any{
		"client_name":                name,
		"grant_types":                []string{GrantAuthorizationCode, GrantRefreshToken},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": method,
		"application_type":           appType,
	}
	if s.cfg.RedirectURL != "" {
		body["redirect_uris"] = []string{s.cfg.RedirectURL}
	}
	b, _ := json.Marshal(body)
	resp, rb, err := s.roundTrip(ctx, http.MethodPost, meta.RegistrationEndpoint, b, "application/json", nil, nil)
	if err != nil {
		return Client{}, err
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return Client{}, decodeOAuthError("registration", resp, rb)
	}
	var out struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		AuthMethod   string `json:"token_endpoint_auth_method"`
	}
	if err := json.Unmarshal(rb, &out); err != nil {
		return Client{}, fmt.Errorf("oauth: registration response: %w", err)
	}
	if out.ClientID == "" {
		return Client{}, errors.New("oauth: registration response has no client_id")
	}
	c := Client{ID: out.ClientID, Secret: out.ClientSecret, AuthMethod: out.AuthMethod, Issuer: meta.Issuer}
	if c.AuthMethod == "" {
		c.AuthMethod = method
		if c.Secret == "" {
			c.AuthMethod = AuthNone
		} else if method == AuthNone {
			c.AuthMethod = "" // choose from metadata
		}
	}
	return c, nil
}

// authenticate adds client authentication to a token request
// (RFC 6749 §2.3, RFC 7523 §2.2) and returns Basic credentials if any.
func (s *Source) authenticate(c Client, meta *ServerMetadata, form url.Values) (*[2]string, error) {
	method := c.AuthMethod
	if method == "" {
		sup := meta.TokenEndpointAuthMethodsSupported
		switch {
		case c.Key != nil && contains(sup, AuthPrivateKeyJWT):
			method = AuthPrivateKeyJWT
		case c.Secret == "":
			method = AuthNone
		case len(sup) == 0 || contains(sup, AuthClientSecretBasic):
			// RFC 8414 §2: client_secret_basic is the default.
			method = AuthClientSecretBasic
		case contains(sup, AuthClientSecretPost):
			method = AuthClientSecretPost
		case c.Key != nil:
			method = AuthPrivateKeyJWT
		default:
			method = AuthClientSecretBasic
		}
	}
	switch method {
	case AuthNone:
		form.Set("client_id", c.ID)
	case AuthClientSecretPost:
		form.Set("client_id", c.ID)
		form.Set("client_secret", c.Secret)
	case AuthClientSecretBasic:
		return &[2]string{c.ID, c.Secret}, nil
	case AuthPrivateKeyJWT:
		if c.Key == nil {
			return nil, errors.New("oauth: private_key_jwt needs Client.Key")
		}
		jwt, err := signAssertion(c, meta.Issuer, time.Now())
		if err != nil {
			return nil, err
		}
		form.Set("client_id", c.ID)
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", jwt)
	default:
		return nil, fmt.Errorf("oauth: unsupported token endpoint auth method %q", method)
	}
	return nil, nil
}

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// withOffline adds offline_access when the authorization server lists it
// and scopes is not empty (2026-07-28 basic/authorization §Refresh Tokens).
func withOffline(meta *ServerMetadata, scopes []string) []string {
	if len(scopes) == 0 || !contains(meta.ScopesSupported, "offline_access") || contains(scopes, "offline_access") {
		return scopes
	}
	return append(append([]string(nil), scopes...), "offline_access")
}

// authorizationCode runs the authorization code flow with PKCE S256,
// state, resource and the RFC 9207 iss check.
func (s *Source) authorizationCode(ctx context.Context, meta *ServerMetadata, resource string, scopes []string) error {
	if !meta.supportsS256() {
		return ErrNoPKCE
	}
	if meta.AuthorizationEndpoint == "" {
		return errors.New("oauth: authorization server metadata has no authorization_endpoint")
	}
	if s.cfg.Authorize == nil || s.cfg.RedirectURL == "" {
		return ErrNoAuthorize
	}
	s.mu.Lock()
	local := s.local
	if r, ok := s.redirects[meta.Issuer]; ok && r != s.cfg.RedirectURL {
		// A saved registration for another redirect URI (a loopback
		// port of an earlier process): the server may compare redirect
		// URIs exactly, so register again rather than fail in the
		// browser.
		delete(s.registered, meta.Issuer)
		delete(s.redirects, meta.Issuer)
	}
	s.mu.Unlock()
	// The user agent goes there (Headless fetches it): the same rules as
	// for every other URL of the flow.
	if err := checkURL(meta.AuthorizationEndpoint, local); err != nil {
		return err
	}
	c, err := s.clientFor(ctx, meta)
	if err != nil {
		return err
	}
	verifier := randomString(32)
	sum := sha256.Sum256([]byte(verifier))
	state := randomString(16)
	issuer := meta.Issuer // recorded before the user agent leaves

	au, err := url.Parse(meta.AuthorizationEndpoint)
	if err != nil {
		return err
	}
	q := au.Query()
	q.Set("response_type", "code")
	q.Set("client_id", c.ID)
	q.Set("redirect_uri", s.cfg.RedirectURL)
	q.Set("code_challenge", base64.RawURLEncoding.EncodeToString(sum[:]))
	q.Set("code_challenge_method", "S256")
	q.Set("state", state)
	q.Set("resource", resource)
	requested := withOffline(meta, scopes)
	if len(requested) > 0 {
		q.Set("scope", strings.Join(requested, " "))
	}
	au.RawQuery = q.Encode()

	got, err := s.authorize(ctx, au.String())
	if err != nil {
		return err
	}
	if err := checkAuthorizationResponse(got, issuer, meta.AuthorizationResponseIssParamSupported); err != nil {
		return err
	}
	if got.Get("state") != state {
		return ErrStateMismatch
	}
	if e := got.Get("error"); e != "" {
		return &OAuthError{Endpoint: "authorization", Code: e, Description: got.Get("error_description"), URI: got.Get("error_uri"), Fields: queryFields(got)}
	}
	code := got.Get("code")
	if code == "" {
		return errors.New("oauth: authorization response has no code")
	}

	form := url.Values{
		"grant_type":    {GrantAuthorizationCode},
		"code":          {code},
		"redirect_uri":  {s.cfg.RedirectURL},
		"code_verifier": {verifier},
		"resource":      {resource},
	}
	return s.redeem(ctx, meta, c, form, scopes, "")
}

// authorize runs the user-agent step within the authorize timeout.
func (s *Source) authorize(ctx context.Context, authURL string) (url.Values, error) {
	d := timeout(s.cfg.AuthorizeTimeout, DefaultAuthorizeTimeout)
	if d <= 0 {
		return s.cfg.Authorize(ctx, authURL)
	}
	actx, cancel := context.WithTimeoutCause(ctx, d, errAuthorizeTimeout)
	defer cancel()
	got, err := s.cfg.Authorize(actx, authURL)
	if err != nil && ctx.Err() == nil && context.Cause(actx) == errAuthorizeTimeout {
		return nil, fmt.Errorf("oauth: the user agent did not come back within %v: %w (%w)", d, client.ErrTimeout, context.DeadlineExceeded)
	}
	return got, err
}

// errAuthorizeTimeout is the cause of a user-agent step the authorize
// timeout ended.
var errAuthorizeTimeout = errors.New("oauth: authorize timeout")

// checkAuthorizationResponse applies RFC 9207 §2.4 as 2026-07-28
// basic/authorization §Authorization Response Validation tabulates it: a
// present iss must equal the recorded issuer by simple string comparison;
// an absent iss is refused when the server advertised it. On a mismatch
// the response's error fields are not looked at.
func checkAuthorizationResponse(got url.Values, issuer string, advertised bool) error {
	iss, present := got["iss"]
	switch {
	case present:
		if len(iss) != 1 || iss[0] != issuer {
			return fmt.Errorf("%w: authorization response iss is not %q", ErrIssuerMismatch, issuer)
		}
	case advertised:
		return fmt.Errorf("%w: authorization response lacks the iss the server advertises", ErrIssuerMismatch)
	}
	return nil
}

// refresh uses the refresh token of t (RFC 6749 §6).
func (s *Source) refresh(ctx context.Context, t *token) error {
	s.mu.Lock()
	meta, resource := s.meta, s.resource
	s.mu.Unlock()
	if meta == nil {
		return errors.New("oauth: no authorization server to refresh with")
	}
	c, err := s.clientFor(ctx, meta)
	if err != nil {
		return err
	}
	form := url.Values{
		"grant_type":    {GrantRefreshToken},
		"refresh_token": {t.refresh},
		"resource":      {resource},
	}
	return s.redeem(ctx, meta, c, form, nil, t.refresh)
}

// clientCredentials runs the client_credentials grant (RFC 6749 §4.4) with
// the pre-registered client: client secret or private_key_jwt.
func (s *Source) clientCredentials(ctx context.Context, meta *ServerMetadata, resource string, scopes []string) error {
	c, ok, err := s.preRegistered(meta)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("oauth: client_credentials needs a pre-registered client for %s", meta.Issuer)
	}
	form := url.Values{"grant_type": {GrantClientCredentials}, "resource": {resource}}
	return s.grant(ctx, meta, c, form, scopes)
}

// jwtBearer runs enterprise-managed authorization: an ID-JAG from
// Config.Assertion traded at the authorization server with the RFC 7523
// jwt-bearer grant. The ID-JAG is not kept.
func (s *Source) jwtBearer(ctx context.Context, meta *ServerMetadata, resource string, scopes []string) error {
	if s.cfg.Assertion == nil {
		return errors.New("oauth: the jwt-bearer grant needs Config.Assertion")
	}
	c, ok, err := s.preRegistered(meta)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("oauth: enterprise-managed authorization needs a pre-registered client for %s", meta.Issuer)
	}
	jag, err := s.cfg.Assertion(ctx, AssertionRequest{Issuer: meta.Issuer, Resource: resource, Scopes: scopes, ClientID: c.ID})
	if err != nil {
		return err
	}
	form := url.Values{"grant_type": {GrantJWTBearer}, "assertion": {jag}, "resource": {resource}}
	return s.grant(ctx, meta, c, form, scopes)
}

// grant asks the token endpoint, as client c, for a token with form (plus
// the scopes, when there are any) and keeps it.
func (s *Source) grant(ctx context.Context, meta *ServerMetadata, c Client, form url.Values, scopes []string) error {
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	return s.redeem(ctx, meta, c, form, scopes, "")
}

// redeem sends form, authenticated as client c, to the token endpoint of
// meta, and stores the tokens of the answer (see store).
func (s *Source) redeem(ctx context.Context, meta *ServerMetadata, c Client, form url.Values, scopes []string, keepRefresh string) error {
	dpop, err := s.dpopFor(meta)
	if err != nil {
		return err
	}
	// A use_dpop_nonce answer (RFC 9449 §8) is followed by one more
	// request with the nonce, its client authentication made anew (a
	// client assertion's jti serves once).
	for attempt := 0; ; attempt++ {
		f := make(url.Values, len(form)+3)
		for k, vs := range form {
			f[k] = vs
		}
		basic, err := s.authenticate(c, meta, f)
		if err != nil {
			return err
		}
		tr, nonce, err := s.postForm(ctx, "token", meta.TokenEndpoint, f, basic, dpop)
		if nonce && attempt == 0 {
			continue
		}
		if err != nil {
			return err
		}
		return s.store(ctx, c, tr, scopes, keepRefresh, dpop)
	}
}

// preRegistered returns the client Config.Clients has for the issuer of
// meta. A client registered with another issuer (Client.Issuer) is an
// error, not a fallback: its credentials are not sent.
func (s *Source) preRegistered(meta *ServerMetadata) (Client, bool, error) {
	if s.cfg.Clients == nil {
		return Client{}, false, nil
	}
	c, ok := s.cfg.Clients(meta.Issuer)
	if !ok {
		return Client{}, false, nil
	}
	if c.Issuer != meta.Issuer {
		return Client{}, false, fmt.Errorf("%w: Config.Clients answered for %q with a client of %q", ErrClientIssuer, meta.Issuer, c.Issuer)
	}
	return c, true, nil
}
