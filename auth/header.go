package auth

import (
	"errors"
	"strings"
)

// Errors of ParseAuthorization.
var (
	// errNoCredentials: no Authorization header, or one of another scheme.
	errNoCredentials = errors.New("no bearer credentials")
	// errMalformed: a repeated or malformed Authorization header.
	errMalformed = errors.New("malformed Authorization header")
)

// ParseAuthorization extracts the bearer token from the values of the
// Authorization header (RFC 6750 §2.1: `Bearer 1*SP b64token`, the scheme
// matched case-insensitively). It returns "" and no error when no bearer
// credentials are present (no header, or another scheme), and an error for
// a repeated header or malformed bearer credentials, which the resource
// answers with 400 invalid_request (RFC 6750 §3.1).
func ParseAuthorization(values []string) (string, error) {
	switch len(values) {
	case 0:
		return "", nil
	case 1:
	default:
		return "", errMalformed
	}
	v := values[0]
	sp := strings.IndexByte(v, ' ')
	if sp < 0 {
		if strings.EqualFold(v, "Bearer") {
			return "", errMalformed
		}
		return "", nil
	}
	if !strings.EqualFold(v[:sp], "Bearer") {
		return "", nil
	}
	tok := strings.TrimLeft(v[sp+1:], " ")
	if tok == "" || !isB64Token(tok) {
		return "", errMalformed
	}
	return tok, nil
}

// isB64Token reports whether s is an RFC 6750 b64token:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	i := 0
	for i < len(s) {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/') {
			break
		}
		i++
	}
	if i == 0 {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] != '=' {
			return false
		}
	}
	return true
}

// challengeParam is one auth-param of a WWW-Authenticate challenge.
type challengeParam struct{ name, value string }

// buildChallenge formats an RFC 9110 §11.6.1 challenge: scheme, then the
// parameters as quoted strings (backslash-escaping '"' and '\', dropping
// control characters, which a quoted-string cannot hold).
func buildChallenge(scheme string, params ...challengeParam) string {
	var b strings.Builder
	b.WriteString(scheme)
	first := true
	for _, p := range params {
		if p.value == "" {
			continue
		}
		if first {
			b.WriteByte(' ')
			first = false
		} else {
			b.WriteString(", ")
		}
		b.WriteString(p.name)
		b.WriteString(`="`)
		for i := 0; i < len(p.value); i++ {
			c := p.value[i]
			switch {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c < 0x20 && c != '\t' || c == 0x7f:
				// not representable
			default:
				b.WriteByte(c)
			}
		}
		b.WriteByte('"')
	}
	return b.String()
}

// Challenge is a parsed WWW-Authenticate challenge.
type Challenge struct {
	// Scheme is the auth scheme, e.g. "Bearer".
	Scheme string
	// Params holds the auth-params by lower-cased name.
	Params map[string]string
}

// ParseChallenges parses a WWW-Authenticate header value (RFC 9110 §11.6.1)
// into its challenges. Token68 credentials are not supported. It is meant
// for clients and tests; it returns an error for malformed input.
func ParseChallenges(h string) ([]Challenge, error) {
	var out []Challenge
	p := &chParser{s: h}
	for {
		p.skipOWS()
		for p.peek() == ',' {
			p.i++
			p.skipOWS()
		}
		if p.i >= len(p.s) {
			break
		}
		scheme := p.token()
		if scheme == "" {
			return nil, errors.New("auth: expected an auth scheme")
		}
		ch := Challenge{Scheme: scheme, Params: map[string]string{}}
		p.skipSP()
		for {
			save := p.i
			p.skipOWS()
			name := p.token()
			p.skipOWS()
			if name == "" || p.peek() != '=' {
				p.i = save // the next challenge's scheme, or the end
				break
			}
			p.i++
			p.skipOWS()
			var val string
			if p.peek() == '"' {
				v, ok := p.quoted()
				if !ok {
					return nil, errors.New("auth: unterminated quoted string")
				}
				val = v
			} else {
				val = p.token()
			}
			key := strings.ToLower(name)
			if _, dup := ch.Params[key]; dup {
				return nil, errors.New("auth: repeated auth-param " + key)
			}
			ch.Params[key] = val
			p.skipOWS()
			if p.peek() == ',' {
				p.i++
				continue
			}
			break
		}
		out = append(out, ch)
	}
	return out, nil
}

type chParser struct {
	s string
	i int
}

func (p *chParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *chParser) skipOWS() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *chParser) skipSP() { p.skipOWS() }

func isTchar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func (p *chParser) token() string {
	start := p.i
	for p.i < len(p.s) && isTchar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *chParser) quoted() (string, bool) {
	p.i++ // opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch c {
		case '\\':
			if p.i+1 >= len(p.s) {
				return "", false
			}
			b.WriteByte(p.s[p.i+1])
			p.i += 2
		case '"':
			p.i++
			return b.String(), true
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return "", false
}
