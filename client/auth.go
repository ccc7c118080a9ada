package client

import (
	"context"
	"net/http"
)

// TokenSource supplies the bearer token sent as Authorization: Bearer <token>.
// It stands for one principal: the cache keeps the private results of every
// token it returns as one credential's (a token renewed on expiry keeps
// them). To send different users' tokens over one Conn, give each call its
// own (CallOptions.Token), which bypasses the cache. Token may be called
// concurrently.
type TokenSource interface {
	Token(ctx context.Context) (string, error) // "" means send no Authorization
}

// Challenger is implemented by a TokenSource that can answer an authorization
// challenge (OAuth). On a 401, or a 403 whose WWW-Authenticate says
// error="insufficient_scope", the client calls Challenge with the endpoint URL and the
// response (body already read and closed; headers intact), then retries the request
// with a fresh Token(); at most 3 attempts per operation. A nil error means retry.
// mcp.BearerChallenge reads the response's Bearer challenge.
type Challenger interface {
	Challenge(ctx context.Context, endpoint string, resp *http.Response) error
}

// RequestAuthorizer is implemented by a TokenSource whose tokens may be
// bound to a key (OAuth 2.0 DPoP, RFC 9449): for every HTTP request that
// carries the TokenSource's token (retries included, since a DPoP proof
// serves one request), the client calls AuthorizeRequest with the
// request's method, URL and the token, and sends the headers it returns
// (Authorization, and DPoP for a bound token) instead of
// "Authorization: Bearer <token>". A call's own credential
// (CallOptions.Token) does not go through it. oauth.Source implements it.
type RequestAuthorizer interface {
	AuthorizeRequest(ctx context.Context, method, url, token string) (http.Header, error)
}

// maxAuthAttempts bounds the authorization attempts of one operation.
const maxAuthAttempts = 3

type staticToken string

// Token returns the static token.
func (s staticToken) Token(context.Context) (string, error) { return string(s), nil }

// StaticToken returns a TokenSource that always supplies token. It answers no
// challenges: a 401 is returned to the caller as an *HTTPError.
func StaticToken(token string) TokenSource { return staticToken(token) }
