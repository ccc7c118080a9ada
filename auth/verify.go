package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/mcpfn/mcpfn/core"
)

// Authenticate implements [core.Authenticator]: it verifies the bearer token
// (or, with Options.DPoP, the DPoP-bound token and its proof) and returns a
// context carrying its [TokenInfo] and a [core.Principal], or the 400, 401,
// 403, 421 or 503 error to answer with.
func (rs *ProtectedResource) Authenticate(r *http.Request) (context.Context, error) {
	e := rs.pick(r)
	if e == nil {
		return nil, errMisdirected
	}
	ctx := r.Context()
	if r.URL.RawQuery != "" && r.URL.Query().Has("access_token") {
		return nil, rs.challenge(e, http.StatusBadRequest, "invalid_request", "access tokens are accepted only in the Authorization header", nil, errMalformed)
	}
	tok, dpop, err := parseCredentials(r.Header.Values("Authorization"))
	if dpop && rs.dpop == nil {
		// The DPoP scheme is not accepted here: as no credentials.
		tok, dpop, err = "", false, nil
	}
	if err != nil {
		return nil, rs.challengeFor(e, dpop, http.StatusBadRequest, "invalid_request", "malformed Authorization header", nil, err, "")
	}
	if tok == "" {
		return nil, rs.challenge(e, http.StatusUnauthorized, "", "", rs.required, ErrNoToken)
	}
	var proof string
	if dpop {
		// Exactly one proof, of bounded size, before any work on it
		// (RFC 9449 §4.3 check 1).
		ps := r.Header.Values("DPoP")
		if len(ps) != 1 || len(ps[0]) > MaxDPoPProofBytes {
			return nil, rs.challengeFor(e, true, http.StatusUnauthorized, "invalid_dpop_proof", "one DPoP proof of at most 8 KiB is needed", rs.required, ErrInvalidDPoPProof, "")
		}
		proof = ps[0]
	} else if rs.dpop != nil && rs.dpop.required {
		return nil, rs.challengeFor(e, true, http.StatusUnauthorized, "invalid_token", "only DPoP-bound access tokens are accepted", rs.required, ErrInvalidToken, "")
	}
	info, err := rs.verify(ctx, e, tok)
	if err != nil {
		if errors.Is(err, errUnavailable) {
			if ctx.Err() != nil {
				// The client went away while the request waited.
				rs.log.DebugContext(ctx, "request ended while waiting for the authorization server", "error", err.Error())
			} else {
				rs.log.WarnContext(ctx, "authorization server unavailable", "error", err.Error())
			}
			return nil, rs.unavailable(err)
		}
		return nil, rs.challengeFor(e, dpop, http.StatusUnauthorized, "invalid_token", "the access token is invalid", rs.required, err, "")
	}
	jkt, ok := tokenJKT(info.Claims)
	switch {
	case !ok:
		return nil, rs.challengeFor(e, dpop, http.StatusUnauthorized, "invalid_token", "the access token's cnf is malformed", rs.required, ErrInvalidToken, "")
	case !dpop && jkt != "":
		// A DPoP-bound token without its proof: accepting it as a
		// bearer token would undo the binding (RFC 9449 §7.2).
		return nil, rs.challengeFor(e, false, http.StatusUnauthorized, "invalid_token", "the access token is DPoP-bound: present it with the DPoP scheme and a proof", rs.required, ErrInvalidToken, "")
	case dpop && jkt == "":
		// The DPoP scheme with a token bound to no key: there is no key
		// for the proof to be checked against (RFC 9449 §7.1).
		return nil, rs.challengeFor(e, true, http.StatusUnauthorized, "invalid_token", "the access token is not DPoP-bound", rs.required, ErrInvalidToken, "")
	case dpop:
		if err := rs.checkProof(proof, r.Method, e, tok, jkt); err != nil {
			if errors.Is(err, ErrDPoPNonce) {
				return nil, rs.challengeFor(e, true, http.StatusUnauthorized, "use_dpop_nonce", "the resource server requires a nonce in the DPoP proof", rs.required, err, rs.dpop.nonce(time.Now()))
			}
			return nil, rs.challengeFor(e, true, http.StatusUnauthorized, "invalid_dpop_proof", "the DPoP proof is invalid", rs.required, err, "")
		}
		info.DPoPThumbprint = jkt
	}
	if !hasAll(info.Scopes, rs.required) {
		return nil, rs.challengeFor(e, dpop, http.StatusForbidden, "insufficient_scope", "the access token lacks required scopes", rs.required, ErrInsufficientScope, "")
	}
	info.entry = e
	ctx = context.WithValue(ctx, tokenInfoKey{}, info)
	return core.NewContextWithPrincipal(ctx, &core.Principal{
		Issuer: info.Issuer, ClientID: info.ClientID, Subject: info.Subject, Scopes: info.Scopes,
	}), nil
}

// checkProof verifies the DPoP proof of a request with tok, bound to the
// key of thumbprint jkt, to the resource of e (RFC 9449 §4.3, §7.1). The
// htu is compared with the resource URI, the URL clients use, not with
// what the handler sees behind proxies and gateways.
func (rs *ProtectedResource) checkProof(proof, method string, e *resourceEntry, tok, jkt string) error {
	p, err := parseDPoPProof(proof, rs.dpop.algs)
	if err != nil {
		return err
	}
	return rs.dpop.check(p, method, e.htu, tok, jkt, time.Now())
}

// verify checks tok and returns the caller. A JWT goes to the issuer named
// by its iss; opaque tokens go to the introspecting issuer, if any.
func (rs *ProtectedResource) verify(ctx context.Context, e *resourceEntry, tok string) (*TokenInfo, error) {
	if len(tok) > maxTokenBytes {
		return nil, fmt.Errorf("%w: token too long", ErrInvalidToken)
	}
	now := time.Now()
	var is *issuer
	key := sha256.Sum256([]byte(tok))
	c := rs.jwtCache.get(key, now)
	if c != nil {
		is = rs.issuers[c.iss]
		return rs.tokenInfo(e, is, c, tok, now)
	}
	h, jc, err := splitJWT(tok, defaultClaimNames)
	switch {
	case errors.Is(err, errNotJWT):
		if rs.introspector == nil {
			return nil, fmt.Errorf("%w: not a JWT", ErrInvalidToken)
		}
		is = rs.introspector
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	default:
		is = rs.issuers[jc.iss]
		if is == nil {
			return nil, fmt.Errorf("%w: unknown issuer", ErrInvalidToken)
		}
	}
	if is.intro != nil {
		c, err = is.intro.introspect(ctx, tok, key, now)
		if err != nil {
			return nil, err
		}
		if c == nil {
			return nil, fmt.Errorf("%w: inactive", ErrInvalidToken)
		}
		if c.iss != is.name {
			return nil, fmt.Errorf("%w: introspection names another issuer", ErrInvalidToken)
		}
	} else {
		if c, err = rs.verifyJWT(ctx, is, tok, h, jc, now); err != nil {
			return nil, err
		}
		expires := now.Add(is.jwksTTL)
		if c.hasExp && c.exp.Before(expires) {
			expires = c.exp
		}
		rs.jwtCache.put(key, c, expires, now)
	}
	return rs.tokenInfo(e, is, c, tok, now)
}

// tokenInfo applies the time and audience checks to verified claims and
// describes the caller.
func (rs *ProtectedResource) tokenInfo(e *resourceEntry, is *issuer, c *claims, tok string, now time.Time) (*TokenInfo, error) {
	if err := rs.checkClaims(e, is, c, now); err != nil {
		return nil, err
	}
	st := &callState{res: rs}
	st.info = TokenInfo{
		Issuer:   is.name,
		ClientID: c.client,
		Subject:  c.sub,
		Scopes:   rs.implies.expand(c.scopes),
		Audience: c.aud,
		Expiry:   c.exp,
		Claims:   c.all,
		Token:    Token(tok),
		state:    st,
	}
	return &st.info, nil
}

// verifyJWT checks the signature of a JWT against the issuer's keys, then
// decodes its claims with the issuer's claim names.
func (rs *ProtectedResource) verifyJWT(ctx context.Context, is *issuer, tok string, h jwtHeader, jc *claims, now time.Time) (*claims, error) {
	if len(h.Crit) > 0 {
		return nil, fmt.Errorf("%w: unsupported crit header", ErrInvalidToken)
	}
	if is.types != nil {
		ok := false
		t := normType(h.Typ)
		for _, want := range is.types {
			if t == want {
				ok = true
				break
			}
		}
		if !ok {
			return nil, fmt.Errorf("%w: typ %q not accepted", ErrInvalidToken, h.Typ)
		}
	}
	switch h.Alg {
	case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA":
	default:
		return nil, fmt.Errorf("%w: alg %q not accepted", ErrInvalidToken, h.Alg)
	}
	keys, err := is.keys.lookup(ctx, h.Kid, h.Alg, now)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no key fits kid %q and alg %s", ErrInvalidToken, h.Kid, h.Alg)
	}
	var payload []byte
	for _, k := range keys {
		if payload, err = jws.Verify([]byte(tok), jws.WithKey(jwa.SignatureAlgorithm(h.Alg), k.raw)); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: signature", ErrInvalidToken)
	}
	c := jc // the verified payload is the one splitJWT decoded
	if is.names != defaultClaimNames {
		if c, err = parseClaims(payload, is.names); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidToken, err)
		}
	}
	if c.iss != is.name {
		return nil, fmt.Errorf("%w: iss", ErrInvalidToken)
	}
	return c, nil
}

// checkClaims applies the time and audience rules to verified claims of
// issuer is: aud must name the resource, an Options.Audiences entry or one
// of the issuer's own Audiences.
func (rs *ProtectedResource) checkClaims(e *resourceEntry, is *issuer, c *claims, now time.Time) error {
	if !c.hasExp {
		return fmt.Errorf("%w: no exp", ErrInvalidToken)
	}
	if !now.Before(c.exp.Add(rs.leeway)) {
		return fmt.Errorf("%w: expired", ErrInvalidToken)
	}
	if !c.nbf.IsZero() && now.Add(rs.leeway).Before(c.nbf) {
		return fmt.Errorf("%w: not yet valid", ErrInvalidToken)
	}
	if !c.iat.IsZero() && now.Add(rs.leeway).Before(c.iat) {
		return fmt.Errorf("%w: issued in the future", ErrInvalidToken)
	}
	for _, a := range c.aud {
		for _, want := range e.audiences {
			if a == want {
				return nil
			}
		}
		for _, want := range is.audiences {
			if a == want {
				return nil
			}
		}
	}
	return fmt.Errorf("%w: audience", ErrInvalidToken)
}
