package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/mcp"
)

// PlainOptions configures Basic and Bearer: plain HTTP authentication with
// static credentials or a verify function.
//
// This is not MCP authorization (2026-07-28 basic/authorization): there is
// no authorization server, no metadata document, no scopes and no audience
// check, and MCP clients cannot obtain such credentials by themselves. Use
// it for private deployments whose clients are configured with a key.
type PlainOptions struct {
	// Realm is the realm of the challenge. Required.
	Realm string
	// Credentials are static credentials: for Bearer, token → the
	// principal's subject; for Basic, user name → password (the subject is
	// the user name).
	Credentials map[string]string
	// Verify, when set, checks credentials not in Credentials: for Bearer
	// the user is "" and secret the token; for Basic the user name and the
	// password. It returns the principal's subject, or false. It must be
	// safe for concurrent use, and should compare in constant time.
	Verify func(ctx context.Context, user, secret string) (subject string, ok bool)
}

// plain is the Authenticator of Basic and Bearer.
type plain struct {
	scheme, realm string
	// keys are the SHA-256 digests of the static secrets ("user:password"
	// for Basic), compared in constant time, one after the other.
	keys     [][32]byte
	subjects []string
	verify   func(ctx context.Context, user, secret string) (string, bool)
	refusal  *core.Error
}

// Basic returns a [core.Authenticator] for HTTP Basic authentication
// (RFC 7617). Every request but CORS preflights needs valid credentials;
// others get 401 with `WWW-Authenticate: Basic realm="…", charset="UTF-8"`.
// The principal is the user, with issuer "basic:" + realm, so legacy
// sessions and request state belong to it. It is not MCP authorization:
// see [PlainOptions].
func Basic(o PlainOptions) (core.Authenticator, error) {
	return newPlain("Basic", o)
}

// Bearer returns a [core.Authenticator] for static API keys sent as
// `Authorization: Bearer <key>` (RFC 6750 syntax, no OAuth). Requests without
// a valid key get 401 with `WWW-Authenticate: Bearer realm="…"`. The
// principal's subject is the key's subject, with issuer "bearer:" + realm.
// It is not MCP authorization: see [PlainOptions].
func Bearer(o PlainOptions) (core.Authenticator, error) {
	return newPlain("Bearer", o)
}

func newPlain(scheme string, o PlainOptions) (*plain, error) {
	if o.Realm == "" {
		return nil, errors.New("auth: " + scheme + ": Realm is required")
	}
	if len(o.Credentials) == 0 && o.Verify == nil {
		return nil, errors.New("auth: " + scheme + ": no Credentials and no Verify")
	}
	p := &plain{scheme: scheme, realm: o.Realm, verify: o.Verify}
	for k, v := range o.Credentials {
		if k == "" || v == "" {
			return nil, errors.New("auth: " + scheme + ": empty credential")
		}
		secret, subject := k, v
		if scheme == "Basic" {
			if strings.Contains(k, ":") {
				return nil, errors.New("auth: Basic: a user name cannot contain ':' (RFC 7617 §2)")
			}
			secret, subject = k+":"+v, k
		}
		p.keys = append(p.keys, sha256.Sum256([]byte(secret)))
		p.subjects = append(p.subjects, subject)
	}
	params := []mcp.AuthParam{{Name: "realm", Value: o.Realm}}
	if scheme == "Basic" {
		params = append(params, mcp.AuthParam{Name: "charset", Value: "UTF-8"})
	}
	p.refusal = (&core.Error{Code: core.CodeInvalidRequest, Message: "Unauthorized"}).
		WithHTTP(http.StatusUnauthorized, http.Header{"Www-Authenticate": {mcp.FormatChallenge(scheme, params...)}})
	return p, nil
}

// Metadata implements [core.Authenticator]: plain authentication has no
// metadata.
func (p *plain) Metadata(*http.Request) ([]byte, error) { return nil, nil }

// Authorize implements [core.Authenticator]: every authenticated caller may
// do everything.
func (p *plain) Authorize(context.Context, core.Operation) error { return nil }

// Authenticate implements [core.Authenticator].
func (p *plain) Authenticate(r *http.Request) (context.Context, error) {
	vals := r.Header.Values("Authorization")
	if len(vals) != 1 {
		return nil, p.refusal
	}
	scheme, cred, ok := strings.Cut(vals[0], " ")
	if !ok || !strings.EqualFold(scheme, p.scheme) {
		return nil, p.refusal
	}
	cred = strings.TrimLeft(cred, " ")
	user, secret := "", cred
	if p.scheme == "Basic" {
		b, err := base64.StdEncoding.DecodeString(cred)
		if err != nil {
			return nil, p.refusal
		}
		u, pw, ok := strings.Cut(string(b), ":")
		if !ok {
			return nil, p.refusal
		}
		user, secret, cred = u, pw, string(b)
	}
	subject, found := "", false
	if len(p.keys) > 0 {
		d := sha256.Sum256([]byte(cred))
		for i := range p.keys { // every key, so timing does not say which matched
			if subtle.ConstantTimeCompare(d[:], p.keys[i][:]) == 1 {
				subject, found = p.subjects[i], true
			}
		}
	}
	if !found && p.verify != nil {
		subject, found = p.verify(r.Context(), user, secret)
	}
	if !found || subject == "" {
		return nil, p.refusal
	}
	return core.NewContextWithPrincipal(r.Context(), &core.Principal{
		Issuer: strings.ToLower(p.scheme) + ":" + p.realm, Subject: subject,
	}), nil
}
