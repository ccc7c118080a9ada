package auth

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"time"
)

// jwtHeader is the part of a JWS protected header the resource reads before
// verifying.
type jwtHeader struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	Typ string `json:"typ"`
	// Crit lists extensions the verifier must understand (RFC 7515 §4.1.11);
	// none are supported, so a token naming any is refused.
	Crit []string `json:"crit"`
}

// claims are the decoded claims of a token (JWT payload or introspection
// response) in the names the resource checks.
type claims struct {
	iss, sub, client string
	aud              []string
	scopes           []string
	exp, nbf, iat    time.Time
	hasExp           bool
	active           bool // introspection only
	all              map[string]json.RawMessage
}

var errNotJWT = errors.New("not a JWT")

// maxTokenBytes bounds the bearer token the resource reads; longer tokens are
// invalid without further work.
const maxTokenBytes = 16 << 10

// splitJWT decodes the header and claims of a compact JWS without verifying
// it. It returns errNotJWT when tok does not have the three-part shape with
// a JSON object header (an opaque token), and another error when it has that
// shape but is malformed.
func splitJWT(tok string, names claimNames) (jwtHeader, *claims, error) {
	var h jwtHeader
	d1 := strings.IndexByte(tok, '.')
	if d1 <= 0 {
		return h, nil, errNotJWT
	}
	d2 := strings.IndexByte(tok[d1+1:], '.')
	if d2 < 0 {
		return h, nil, errNotJWT
	}
	d2 += d1 + 1
	if strings.IndexByte(tok[d2+1:], '.') >= 0 {
		return h, nil, errNotJWT // five parts: JWE, which is not supported
	}
	hb, err := base64.RawURLEncoding.DecodeString(tok[:d1])
	if err != nil || len(hb) == 0 || hb[0] != '{' {
		return h, nil, errNotJWT
	}
	if err := json.Unmarshal(hb, &h); err != nil {
		return h, nil, errors.New("malformed JWS header")
	}
	pb, err := base64.RawURLEncoding.DecodeString(tok[d1+1 : d2])
	if err != nil {
		return h, nil, errors.New("malformed JWT payload encoding")
	}
	c, err := parseClaims(pb, names)
	if err != nil {
		return h, nil, err
	}
	return h, c, nil
}

// claimNames are the claim names the resource reads for the client and the
// scopes.
type claimNames struct {
	scope, client string
}

var defaultClaimNames = claimNames{scope: "scope", client: "client_id"}

// parseClaims decodes a JSON object of claims (a JWT payload or an RFC 7662
// introspection response). Registered claims must have their registered
// types; the scope claim may be a space-separated string or an array of
// strings (as "scp" often is), and only its valid scope-tokens are kept
// (see scopeList).
func parseClaims(b []byte, names claimNames) (*claims, error) {
	var all map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&all); err != nil || all == nil {
		return nil, errors.New("claims are not a JSON object")
	}
	if dec.More() {
		return nil, errors.New("trailing data after the claims")
	}
	c := &claims{all: all}
	var err error
	str := func(name string, dst *string) {
		if v, ok := all[name]; ok && err == nil {
			if e := json.Unmarshal(v, dst); e != nil {
				err = errors.New("claim " + name + " must be a string")
			}
		}
	}
	num := func(name string, dst *time.Time) bool {
		v, ok := all[name]
		if !ok || err != nil {
			return false
		}
		var f float64
		if e := json.Unmarshal(v, &f); e != nil || math.IsNaN(f) || f < 0 || f > 1<<40 {
			err = errors.New("claim " + name + " must be a NumericDate")
			return false
		}
		sec, frac := math.Modf(f)
		*dst = time.Unix(int64(sec), int64(frac*1e9))
		return true
	}
	str("iss", &c.iss)
	str("sub", &c.sub)
	if names.client != "" {
		str(names.client, &c.client)
	}
	c.hasExp = num("exp", &c.exp)
	num("nbf", &c.nbf)
	num("iat", &c.iat)
	if v, ok := all["aud"]; ok && err == nil {
		c.aud, err = stringOrList(v)
		if err != nil {
			err = errors.New("claim aud must be a string or an array of strings")
		}
	}
	if v, ok := all[names.scope]; ok && err == nil {
		c.scopes, err = scopeList(v)
		if err != nil {
			err = errors.New("claim " + names.scope + " must be a string or an array of strings")
		}
	}
	if v, ok := all["active"]; ok && err == nil {
		if e := json.Unmarshal(v, &c.active); e != nil {
			err = errors.New("member active must be a boolean")
		}
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// stringOrList decodes a JSON string or array of strings.
func stringOrList(v json.RawMessage) ([]string, error) {
	if len(v) > 0 && v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, err
		}
		return []string{s}, nil
	}
	var l []string
	if err := json.Unmarshal(v, &l); err != nil {
		return nil, err
	}
	return l, nil
}

// scopeList decodes a scope claim: a string of scope-tokens separated by
// U+0020 (RFC 6749 §3.3, the form of "scope" in RFC 9068 §2.2.3 and RFC
// 7662 §2.2), or an array of scope-tokens (as "scp" often is). Only U+0020
// separates: a tab, a line break or a Unicode space is part of its token,
// which is then not a scope-token. Tokens that are not scope-tokens grant
// nothing and are dropped; empty ones (repeated, leading or trailing
// spaces) are skipped.
func scopeList(v json.RawMessage) ([]string, error) {
	l, err := stringOrList(v)
	if err != nil {
		return nil, err
	}
	if len(v) > 0 && v[0] == '"' {
		s := l[0]
		l = l[:0]
		for len(s) > 0 {
			tok, rest, _ := strings.Cut(s, " ")
			if tok != "" {
				l = append(l, tok)
			}
			s = rest
		}
	}
	out := l[:0]
	for _, tok := range l {
		if validScopeToken(tok) {
			out = append(out, tok)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
