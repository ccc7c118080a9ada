package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// OAuthError is an error response of an authorization server's token
// endpoint (RFC 6749 §5.2), of its authorization endpoint (RFC 6749
// §4.1.2.1, delivered to the redirect URI), or of its registration endpoint
// (RFC 7591 §3.2.2). Match it with errors.As.
type OAuthError struct {
	Endpoint    string // "token", "authorization", "registration" or "token-exchange"
	StatusCode  int    // HTTP status; 0 for an authorization response
	Code        string // the "error" field, e.g. "invalid_grant"
	Description string // "error_description", if any
	URI         string // "error_uri", if any
	// Fields holds every member of the error response as sent, the three
	// above included: the members of a JSON error body (RFC 6749 §5.2 lets
	// an extension define more, such as the max_age of an
	// insufficient_user_authentication error, RFC 9470 §3), or, for an
	// authorization response, its query parameters as JSON strings. Nil
	// when the body is not a JSON object.
	Fields map[string]json.RawMessage
	// RetryAfter is the server's Retry-After on a 503 (0 if none).
	RetryAfter time.Duration
}

func (e *OAuthError) Error() string {
	s := "oauth: " + e.Endpoint + " endpoint"
	if e.StatusCode != 0 {
		s += " (HTTP " + strconv.Itoa(e.StatusCode) + ")"
	}
	if e.Code != "" {
		s += ": " + e.Code
	}
	if e.Description != "" {
		s += ": " + e.Description
	}
	return s
}

// Temporary reports whether the error is the server's "try later": a 503 or
// the RFC 6749 temporarily_unavailable code.
func (e *OAuthError) Temporary() bool {
	return e.StatusCode == http.StatusServiceUnavailable || e.Code == "temporarily_unavailable"
}

var (
	// ErrResourceMismatch: the protected resource metadata names a resource
	// that does not cover the MCP endpoint (2026-07-28
	// basic/authorization §Resource Parameter Implementation; RFC 9728 §3.3).
	ErrResourceMismatch = errors.New("oauth: protected resource metadata is for another resource")
	// ErrIssuerMismatch: authorization server metadata whose issuer is not
	// the issuer it was looked up for (RFC 8414 §3.3), or an authorization
	// response whose iss is not the recorded issuer (RFC 9207 §2.4).
	ErrIssuerMismatch = errors.New("oauth: issuer mismatch")
	// ErrNoPKCE: the authorization server does not list S256 in
	// code_challenge_methods_supported (2026-07-28
	// basic/authorization/security-considerations §Authorization Code
	// Protection).
	ErrNoPKCE = errors.New("oauth: authorization server does not support PKCE S256")
	// ErrNoRegistration: no pre-registered client for the issuer, no client
	// ID metadata document support and no registration endpoint.
	ErrNoRegistration = errors.New("oauth: no way to register a client with the authorization server")
	// ErrInsecureURL: an MCP endpoint, metadata, endpoint or client
	// metadata URL that is neither https nor a loopback http URL (2026-07-28
	// basic/authorization/security-considerations §Communication Security).
	ErrInsecureURL = errors.New("oauth: URL must use https (http only for loopback)")
	// ErrLocalAddress: the flow of an MCP endpoint that is not on a
	// loopback host met a URL whose host names, or resolves when dialed to,
	// a loopback, private, link-local, unspecified or other non-public
	// address (see Config.AllowPrivateNetwork).
	ErrLocalAddress = errors.New("oauth: a remote server's flow may not reach a local address")
	// ErrClientIssuer: Config.Clients answered with a client whose Issuer
	// is not the authorization server of the flow; its credentials were
	// not sent.
	ErrClientIssuer = errors.New("oauth: pre-registered client is for another issuer")
	// ErrStateMismatch: the authorization response's state is not the one
	// sent.
	ErrStateMismatch = errors.New("oauth: authorization response state mismatch")
	// ErrBackoff: the authorization server answered 503 recently; the
	// Source waits before asking again.
	ErrBackoff = errors.New("oauth: authorization server unavailable, backing off")
	// ErrTooManyScopes: a challenge or metadata document names more than
	// MaxScopes scopes.
	ErrTooManyScopes = errors.New("oauth: too many scopes")
	// ErrNoAuthorize: an authorization code flow is needed but
	// Config.Authorize is nil.
	ErrNoAuthorize = errors.New("oauth: no user agent (Config.Authorize) for the authorization code flow")
)

// httpStatusError is a non-2xx answer from a metadata URL.
type httpStatusError struct {
	url    string
	status int
}

func (e *httpStatusError) Error() string {
	return fmt.Sprintf("oauth: GET %s: HTTP %d", e.url, e.status)
}
