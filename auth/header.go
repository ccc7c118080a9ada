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

// parseCredentials is ParseAuthorization for the Bearer and the DPoP
// schemes (RFC 9449 §7.1: "DPoP" 1*SP token68): it returns the token and
// whether it came with the DPoP scheme. Another scheme is no credentials.
func parseCredentials(values []string) (tok string, dpop bool, err error) {
	if len(values) == 1 {
		v := values[0]
		if len(v) >= 4 && strings.EqualFold(v[:4], "DPoP") && (len(v) == 4 || v[4] == ' ') {
			tok = strings.TrimLeft(v[4:], " ")
			if tok == "" || !isB64Token(tok) {
				return "", true, errMalformed
			}
			return tok, true, nil
		}
	}
	tok, err = ParseAuthorization(values)
	return tok, false, err
}
