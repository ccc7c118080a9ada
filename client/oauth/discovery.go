package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpfn/mcpfn/client"
)

// maxMetadataBytes bounds a metadata document (protected resource,
// authorization server, registration or token response).
const maxMetadataBytes = 256 << 10

// ResourceMetadata is OAuth 2.0 Protected Resource Metadata (RFC 9728 §2),
// the fields this package uses.
type ResourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// ServerMetadata is OAuth 2.0 Authorization Server Metadata (RFC 8414 §2)
// or OpenID Provider Metadata, the fields this package uses.
type ServerMetadata struct {
	Issuer                                 string   `json:"issuer"`
	AuthorizationEndpoint                  string   `json:"authorization_endpoint"`
	TokenEndpoint                          string   `json:"token_endpoint"`
	RegistrationEndpoint                   string   `json:"registration_endpoint"`
	ScopesSupported                        []string `json:"scopes_supported"`
	GrantTypesSupported                    []string `json:"grant_types_supported"`
	CodeChallengeMethodsSupported          []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported      []string `json:"token_endpoint_auth_methods_supported"`
	TokenEndpointAuthSigningAlgsSupported  []string `json:"token_endpoint_auth_signing_alg_values_supported"`
	ClientIDMetadataDocumentSupported      bool     `json:"client_id_metadata_document_supported"`
	AuthorizationResponseIssParamSupported bool     `json:"authorization_response_iss_parameter_supported"`
	// DPoPSigningAlgValuesSupported lists the JWS algorithms the server
	// accepts in DPoP proofs (RFC 9449 §5.1).
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported"`
}

// DecodeResourceMetadata decodes and checks a protected resource metadata
// document: a JSON object with an absolute https (or loopback http)
// resource without fragment, and at least one authorization server, each
// an https (or loopback http) issuer identifier without query or fragment
// (RFC 9728 §2, RFC 8414 §2). An insecure URL is ErrInsecureURL.
func DecodeResourceMetadata(b []byte) (*ResourceMetadata, error) {
	var m ResourceMetadata
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("oauth: protected resource metadata: %w", err)
	}
	if m.Resource == "" {
		return nil, errors.New("oauth: protected resource metadata has no resource")
	}
	u, err := url.Parse(m.Resource)
	if err != nil || u.Fragment != "" || !u.IsAbs() {
		return nil, fmt.Errorf("oauth: protected resource metadata: bad resource %q", m.Resource)
	}
	if err := checkSecureURL(u, m.Resource); err != nil {
		return nil, fmt.Errorf("oauth: protected resource metadata: resource: %w", err)
	}
	if len(m.AuthorizationServers) == 0 {
		return nil, errors.New("oauth: protected resource metadata lists no authorization_servers")
	}
	for _, as := range m.AuthorizationServers {
		u, err := url.Parse(as)
		if err != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
			return nil, fmt.Errorf("%w: protected resource metadata: bad authorization server %q", ErrInsecureURL, as)
		}
		if err := checkSecureURL(u, as); err != nil {
			return nil, fmt.Errorf("oauth: protected resource metadata: authorization server: %w", err)
		}
	}
	return &m, nil
}

// DecodeServerMetadata decodes authorization server metadata and checks it
// against the issuer it was fetched for: issuer identical (simple string
// comparison, RFC 8414 §3.3), endpoints secure.
func DecodeServerMetadata(b []byte, issuer string) (*ServerMetadata, error) {
	var m ServerMetadata
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("oauth: authorization server metadata: %w", err)
	}
	if m.Issuer != issuer {
		return nil, fmt.Errorf("%w: metadata for %q says issuer %q", ErrIssuerMismatch, issuer, m.Issuer)
	}
	if m.TokenEndpoint == "" {
		return nil, errors.New("oauth: authorization server metadata has no token_endpoint")
	}
	for _, e := range []string{m.AuthorizationEndpoint, m.TokenEndpoint, m.RegistrationEndpoint} {
		if e == "" {
			continue
		}
		if err := checkSecure(e); err != nil {
			return nil, err
		}
	}
	return &m, nil
}

// supportsS256 reports whether the metadata lists PKCE S256.
func (m *ServerMetadata) supportsS256() bool {
	return contains(m.CodeChallengeMethodsSupported, "S256")
}

// getJSON GETs a metadata document without following redirects. A status
// other than 200 is an *httpStatusError.
func (s *Source) getJSON(ctx context.Context, raw string) ([]byte, error) {
	resp, b, err := s.roundTrip(ctx, http.MethodGet, raw, nil, "", nil, nil)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &httpStatusError{url: raw, status: resp.StatusCode}
	}
	return b, nil
}

// errRequestTimeout is the cause of a request the request timeout ended.
var errRequestTimeout = errors.New("oauth: request timeout")

// roundTrip sends one request of the flow, with body as contentType and
// basic as client_secret_basic credentials when given, and reads the
// answer (at most maxMetadataBytes), all within the request timeout. The
// URL is checked first: https or loopback http, and for a remote flow no
// local address; a remote flow dials through the guard.
func (s *Source) roundTrip(ctx context.Context, method, raw string, body []byte, contentType string, basic *[2]string, extra http.Header) (*http.Response, []byte, error) {
	s.mu.Lock()
	local := s.local
	s.mu.Unlock()
	if err := checkURL(raw, local); err != nil {
		return nil, nil, err
	}
	hc := s.client(local)
	rctx := ctx
	d := timeout(s.cfg.RequestTimeout, DefaultRequestTimeout)
	if d > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeoutCause(ctx, d, errRequestTimeout)
		defer cancel()
	}
	var rb io.Reader
	if body != nil {
		rb = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(rctx, method, raw, rb)
	if err != nil {
		return nil, nil, err
	}
	for k, vs := range extra {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if basic != nil {
		// RFC 6749 §2.3.1: both parts form-urlencoded first.
		req.SetBasicAuth(url.QueryEscape(basic[0]), url.QueryEscape(basic[1]))
	}
	if !local {
		if p := proxyAddr(hc, req); p != "" {
			req = req.WithContext(context.WithValue(rctx, dialInfoKey{}, &dialInfo{proxy: p}))
		}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, timedOut(ctx, rctx, err, method, raw, d)
	}
	defer resp.Body.Close()
	b, err := readLimited(resp.Body)
	if err != nil {
		return nil, nil, timedOut(ctx, rctx, err, method, raw, d)
	}
	return resp, b, nil
}

// timedOut turns the error of a request that the request timeout ended
// into one that says so and matches client.ErrTimeout and
// context.DeadlineExceeded.
func timedOut(ctx, rctx context.Context, err error, method, raw string, d time.Duration) error {
	if ctx.Err() == nil && context.Cause(rctx) == errRequestTimeout {
		return fmt.Errorf("oauth: %s %s: no complete answer within %v: %w (%w)", method, raw, d, client.ErrTimeout, context.DeadlineExceeded)
	}
	return err
}

func readLimited(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxMetadataBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxMetadataBytes {
		return nil, fmt.Errorf("oauth: response larger than %d bytes", maxMetadataBytes)
	}
	return b, nil
}

// resourceMetadataURLs lists where to look for the protected resource
// metadata of endpoint: the challenge's resource_metadata, else the
// path-form then the root well-known URL (2026-07-28
// basic/authorization/authorization-server-discovery §Protected Resource
// Metadata Discovery Requirements).
func resourceMetadataURLs(endpoint *url.URL, fromChallenge string) []string {
	if fromChallenge != "" {
		return []string{fromChallenge}
	}
	origin := endpoint.Scheme + "://" + endpoint.Host
	const wk = "/.well-known/oauth-protected-resource"
	var out []string
	if p := strings.TrimSuffix(endpoint.EscapedPath(), "/"); p != "" {
		out = append(out, origin+wk+p)
	}
	return append(out, origin+wk)
}

// fetchResourceMetadata finds and checks the protected resource metadata
// for endpoint. Its resource must have the endpoint's origin and a path
// that is a segment prefix of the endpoint's path.
func (s *Source) fetchResourceMetadata(ctx context.Context, endpoint *url.URL, fromChallenge string) (*ResourceMetadata, error) {
	var lastErr error
	for _, u := range resourceMetadataURLs(endpoint, fromChallenge) {
		b, err := s.getJSON(ctx, u)
		if err != nil {
			lastErr = err
			continue
		}
		m, err := DecodeResourceMetadata(b)
		if err != nil {
			return nil, err
		}
		if !resourceCovers(m.Resource, endpoint) {
			return nil, fmt.Errorf("%w: %q does not cover %q", ErrResourceMismatch, m.Resource, endpoint.String())
		}
		return m, nil
	}
	return nil, fmt.Errorf("oauth: no protected resource metadata for %s: %w", endpoint.String(), lastErr)
}

// resourceCovers: same origin (scheme and host compared case-insensitively,
// default ports elided) and the resource's path a prefix of the endpoint's
// on a segment boundary.
func resourceCovers(resource string, endpoint *url.URL) bool {
	r, err := url.Parse(resource)
	if err != nil || r.Fragment != "" {
		return false
	}
	if !strings.EqualFold(r.Scheme, endpoint.Scheme) || hostPort(r) != hostPort(endpoint) {
		return false
	}
	rp := strings.TrimSuffix(r.EscapedPath(), "/")
	ep := strings.TrimSuffix(endpoint.EscapedPath(), "/")
	return rp == "" || ep == rp || strings.HasPrefix(ep, rp+"/")
}

func hostPort(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return net.JoinHostPort(host, port)
}

// serverMetadataURLs lists the well-known URLs for issuer in the order of
// 2026-07-28 basic/authorization/authorization-server-discovery
// §Authorization Server Metadata Discovery (RFC 8414 §3.1 path insertion,
// then OpenID Connect Discovery).
func serverMetadataURLs(issuer string) ([]string, error) {
	u, err := url.Parse(issuer)
	if err != nil || !u.IsAbs() || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("oauth: bad issuer %q", issuer)
	}
	origin := u.Scheme + "://" + u.Host
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	if p == "" {
		return []string{
			origin + "/.well-known/oauth-authorization-server",
			origin + "/.well-known/openid-configuration",
		}, nil
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + p,
		origin + "/.well-known/openid-configuration" + p,
		origin + p + "/.well-known/openid-configuration",
	}, nil
}

// fetchServerMetadata tries the well-known URLs of issuer in order and
// returns the first document whose issuer matches. A document with another
// issuer is never used.
func (s *Source) fetchServerMetadata(ctx context.Context, issuer string) (*ServerMetadata, error) {
	urls, err := serverMetadataURLs(issuer)
	if err != nil {
		return nil, err
	}
	var firstErr error
	for _, u := range urls {
		b, err := s.getJSON(ctx, u)
		if err == nil {
			var m *ServerMetadata
			if m, err = DecodeServerMetadata(b, issuer); err == nil {
				return m, nil
			}
		}
		var se *httpStatusError
		if firstErr == nil || (errors.As(firstErr, &se) && !errors.As(err, &se)) {
			firstErr = err // keep the most telling error (not a plain 404)
		}
	}
	return nil, fmt.Errorf("oauth: no usable authorization server metadata for %s: %w", issuer, firstErr)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
