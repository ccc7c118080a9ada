package client

import (
	"context"
	"net/http"
	"strings"
)

// TokenSource supplies the bearer token sent as Authorization: Bearer <token>.
// It stands for one principal: the cache keeps the private results of every
// token it returns as one credential's (a token renewed on expiry keeps
// them). To send different users' tokens over one Conn, give each call its
// own (WithAuthorization), which bypasses the cache. Token may be called
// concurrently.
type TokenSource interface {
	Token(ctx context.Context) (string, error) // "" means send no Authorization
}

// Challenger is implemented by a TokenSource that can answer an authorization
// challenge (OAuth). On a 401, or a 403 whose WWW-Authenticate says
// error="insufficient_scope", the client calls Challenge with the endpoint URL and the
// response (body already read and closed; headers intact), then retries the request
// with a fresh Token(); at most 3 attempts per operation. A nil error means retry.
type Challenger interface {
	Challenge(ctx context.Context, endpoint string, resp *http.Response) error
}

// maxAuthAttempts bounds the authorization attempts of one operation.
const maxAuthAttempts = 3

type staticToken string

// Token returns the static token.
func (s staticToken) Token(context.Context) (string, error) { return string(s), nil }

// StaticToken returns a TokenSource that always supplies token. It answers no
// challenges: a 401 is returned to the caller as an *HTTPError.
func StaticToken(token string) TokenSource { return staticToken(token) }

// Challenge is one challenge of a WWW-Authenticate header (RFC 9110
// §11.6.1): a scheme with either a token68 or auth-params.
type Challenge struct {
	Scheme  string            // as sent; compare case-insensitively
	Token68 string            // the token68 form, if used
	Params  map[string]string // auth-params, names lower-cased, values unquoted
}

// ParseWWWAuthenticate parses every WWW-Authenticate field of h into its
// challenges. Malformed parts end the parse of their field; what was read
// before is kept. It never fails and runs in time linear in the input.
func ParseWWWAuthenticate(h http.Header) []Challenge {
	var out []Challenge
	for _, v := range h.Values("WWW-Authenticate") {
		out = append(out, parseChallenges(v)...)
	}
	return out
}

// BearerChallenge returns the params of the first Bearer challenge in h, or
// ok false when there is none.
func BearerChallenge(h http.Header) (params map[string]string, ok bool) {
	for _, c := range ParseWWWAuthenticate(h) {
		if strings.EqualFold(c.Scheme, "Bearer") {
			if c.Params == nil {
				c.Params = map[string]string{}
			}
			return c.Params, true
		}
	}
	return nil, false
}

func isTchar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken68Char(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("-._~+/", c) >= 0
}

// parseChallenges parses one field value: 1#challenge.
func parseChallenges(s string) []Challenge {
	var out []Challenge
	i := 0
	skipWS := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	token := func() string {
		j := i
		for i < len(s) && isTchar(s[i]) {
			i++
		}
		return s[j:i]
	}
	for {
		// Skip empty list elements.
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == ',') {
			i++
		}
		if i >= len(s) {
			return out
		}
		scheme := token()
		if scheme == "" {
			return out
		}
		c := Challenge{Scheme: scheme}
		skipWS()
		// token68: a run of token68 chars followed by '='* and then end or ','.
		if i < len(s) && s[i] != ',' {
			j := i
			for j < len(s) && isToken68Char(s[j]) {
				j++
			}
			k := j
			for k < len(s) && s[k] == '=' {
				k++
			}
			e := k
			for e < len(s) && (s[e] == ' ' || s[e] == '\t') {
				e++
			}
			if j > i && (e == len(s) || s[e] == ',') {
				// token68 ("abc=="): nothing but padding follows; an
				// auth-param has a value after its '='.
				c.Token68 = s[i:k]
				i = e
				out = append(out, c)
				continue
			}
			// auth-params
			for {
				skipWS()
				save := i
				name := token()
				skipWS()
				if name == "" || i >= len(s) || s[i] != '=' {
					// Not a param: this is the next challenge's scheme.
					i = save
					break
				}
				i++ // '='
				skipWS()
				var val string
				if i < len(s) && s[i] == '"' {
					i++
					var b strings.Builder
					closed := false
					for i < len(s) {
						ch := s[i]
						if ch == '\\' && i+1 < len(s) {
							b.WriteByte(s[i+1])
							i += 2
							continue
						}
						if ch == '"' {
							i++
							closed = true
							break
						}
						b.WriteByte(ch)
						i++
					}
					if !closed {
						out = append(out, c)
						return out
					}
					val = b.String()
				} else {
					val = token()
				}
				if c.Params == nil {
					c.Params = make(map[string]string)
				}
				lname := strings.ToLower(name)
				if _, dup := c.Params[lname]; !dup {
					c.Params[lname] = val
				}
				skipWS()
				if i < len(s) && s[i] == ',' {
					i++
					continue
				}
				break
			}
		}
		out = append(out, c)
		skipWS()
		if i < len(s) && s[i] != ',' && !isTchar(s[i]) {
			return out
		}
	}
}
