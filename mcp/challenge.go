package mcp

import (
	"errors"
	"net/http"
	"strings"
)

// Challenge is one challenge of a WWW-Authenticate header (RFC 9110
// §11.6.1): an auth scheme with either a token68 or auth-params. For
// Bearer (RFC 6750 §3) the params are realm, scope, error,
// error_description and error_uri, and resource_metadata (RFC 9728 §5.1).
type Challenge struct {
	// Scheme is the auth scheme as sent; compare it case-insensitively.
	Scheme string
	// Token68 is the token68 form (RFC 9110 §11.2), if the challenge used it.
	Token68 string
	// Params holds the auth-params by lower-cased name, values unquoted.
	// It is never nil in a parsed Challenge.
	Params map[string]string
}

// AuthParam is one auth-param of a challenge FormatChallenge writes.
type AuthParam struct {
	Name, Value string
}

// FormatChallenge writes a challenge (RFC 9110 §11.6.1): the scheme, then
// the params in the given order, each as a quoted-string (backslash-escaping
// '"' and '\', dropping control characters, which a quoted-string cannot
// hold). A param with an empty value is left out. ParseChallenges reads the
// result back.
func FormatChallenge(scheme string, params ...AuthParam) string {
	var b strings.Builder
	b.WriteString(scheme)
	first := true
	for _, p := range params {
		if p.Value == "" {
			continue
		}
		if first {
			b.WriteByte(' ')
			first = false
		} else {
			b.WriteString(", ")
		}
		b.WriteString(p.Name)
		b.WriteString(`="`)
		for i := 0; i < len(p.Value); i++ {
			c := p.Value[i]
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

// ParseWWWAuthenticate parses every WWW-Authenticate field of h into its
// challenges, in order. A malformed part ends the parse of its field; what
// was read before is kept (see ParseChallenges). It never fails.
func ParseWWWAuthenticate(h http.Header) []Challenge {
	var out []Challenge
	for _, v := range h.Values("WWW-Authenticate") {
		cs, _ := ParseChallenges(v)
		out = append(out, cs...)
	}
	return out
}

// BearerChallenge returns the params of the first Bearer challenge in h
// (never nil when ok), or ok false when there is none.
func BearerChallenge(h http.Header) (params map[string]string, ok bool) {
	for _, c := range ParseWWWAuthenticate(h) {
		if strings.EqualFold(c.Scheme, "Bearer") {
			return c.Params, true
		}
	}
	return nil, false
}

// Errors of ParseChallenges.
var (
	errNoScheme     = errors.New("mcp: WWW-Authenticate: expected an auth scheme")
	errUnterminated = errors.New("mcp: WWW-Authenticate: unterminated quoted string")
	errRepeated     = errors.New("mcp: WWW-Authenticate: repeated auth-param")
)

// ParseChallenges parses one WWW-Authenticate field value, 1#challenge
// (RFC 9110 §11.6.1), into its challenges. It reads leniently, as a client
// must to find a Bearer challenge among others: empty list elements are
// skipped, a repeated auth-param keeps its first value, and a malformed
// part (no scheme where one is due, an unterminated quoted string) ends the
// parse. The challenges read until then are returned with an error naming
// the first fault, which is nil for a well-formed value (RFC 9110 §11.2:
// each auth-param name occurs once per challenge). It runs in time linear
// in len(v) and never panics.
func ParseChallenges(v string) ([]Challenge, error) {
	p := &chParser{s: v}
	var out []Challenge
	for {
		// Skip empty list elements.
		for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == ',') {
			p.i++
		}
		if p.i >= len(p.s) {
			return out, p.err
		}
		scheme := p.token()
		if scheme == "" {
			return out, p.fail(errNoScheme)
		}
		c := Challenge{Scheme: scheme, Params: map[string]string{}}
		p.skipWS()
		if p.i < len(p.s) && p.s[p.i] != ',' {
			if t, ok := p.token68(); ok {
				c.Token68 = t
				out = append(out, c)
				continue
			}
			if !p.params(&c) {
				return append(out, c), p.err
			}
		}
		out = append(out, c)
		p.skipWS()
		if p.i < len(p.s) && p.s[p.i] != ',' && !isTchar(p.s[p.i]) {
			return out, p.fail(errNoScheme)
		}
	}
}

type chParser struct {
	s   string
	i   int
	err error // the first fault
}

func (p *chParser) fail(err error) error {
	if p.err == nil {
		p.err = err
	}
	return p.err
}

func (p *chParser) skipWS() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *chParser) token() string {
	j := p.i
	for p.i < len(p.s) && isTchar(p.s[p.i]) {
		p.i++
	}
	return p.s[j:p.i]
}

// token68 reads a token68 ("abc==": a run of token68 characters, then only
// padding before the end or the next ','); an auth-param has a value after
// its '='.
func (p *chParser) token68() (string, bool) {
	j := p.i
	for j < len(p.s) && isToken68Char(p.s[j]) {
		j++
	}
	k := j
	for k < len(p.s) && p.s[k] == '=' {
		k++
	}
	e := k
	for e < len(p.s) && (p.s[e] == ' ' || p.s[e] == '\t') {
		e++
	}
	if j > p.i && (e == len(p.s) || p.s[e] == ',') {
		t := p.s[p.i:k]
		p.i = e
		return t, true
	}
	return "", false
}

// params reads the auth-params of c, #auth-param, up to the next
// challenge's scheme. It reports false when the value ends inside a quoted
// string.
func (p *chParser) params(c *Challenge) bool {
	for {
		p.skipWS()
		save := p.i
		name := p.token()
		p.skipWS()
		if name == "" || p.i >= len(p.s) || p.s[p.i] != '=' {
			// Not a param: the next challenge's scheme.
			p.i = save
			return true
		}
		p.i++ // '='
		p.skipWS()
		var val string
		if p.i < len(p.s) && p.s[p.i] == '"' {
			v, ok := p.quoted()
			if !ok {
				p.fail(errUnterminated)
				return false
			}
			val = v
		} else {
			val = p.token()
		}
		lname := strings.ToLower(name)
		if _, dup := c.Params[lname]; dup {
			p.fail(errRepeated)
		} else {
			c.Params[lname] = val
		}
		p.skipWS()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		return true
	}
}

// quoted reads a quoted-string (RFC 9110 §5.6.4) at p.i, unescaping
// quoted-pairs.
func (p *chParser) quoted() (string, bool) {
	p.i++ // opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '\\' && p.i+1 < len(p.s):
			b.WriteByte(p.s[p.i+1])
			p.i += 2
		case c == '"':
			p.i++
			return b.String(), true
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return "", false
}

// isTchar reports whether c is an RFC 9110 §5.6.2 tchar.
func isTchar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// isToken68Char reports whether c may appear in a token68 before its
// padding (RFC 9110 §11.2).
func isToken68Char(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("-._~+/", c) >= 0
}
