package core

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
)

// Principal identifies an authenticated caller: the token issuer, the OAuth
// client and the subject (user). Request state and legacy sessions are bound
// to it. The zero value is not a principal; anonymous requests have none.
type Principal struct {
	Issuer   string
	ClientID string
	Subject  string
	// Scopes granted to the caller, for handlers that check them.
	Scopes []string
}

// key returns a stable, fixed-size identifier of the principal (issuer,
// client and subject; not scopes), or "" for nil.
func (p *Principal) key() string {
	if p == nil {
		return ""
	}
	h := sha256.New()
	for _, s := range []string{p.Issuer, p.ClientID, p.Subject} {
		var n [4]byte
		n[0], n[1], n[2], n[3] = byte(len(s)>>24), byte(len(s)>>16), byte(len(s)>>8), byte(len(s))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18])
}

type principalKey struct{}

// NewContextWithPrincipal returns a context carrying p. Authentication
// middleware calls it; the server reads it for every request.
func NewContextWithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFromContext returns the principal stored by NewContextWithPrincipal,
// or nil.
func PrincipalFromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}
