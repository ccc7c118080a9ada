package auth

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"time"
)

// Token is a raw bearer token. Its String, GoString and LogValue redact it,
// so that it does not reach logs by accident.
type Token string

// String returns "REDACTED".
func (Token) String() string { return "REDACTED" }

// GoString returns "REDACTED".
func (Token) GoString() string { return "REDACTED" }

// LogValue implements [slog.LogValuer]: the token is never logged.
func (Token) LogValue() slog.Value { return slog.StringValue("REDACTED") }

// TokenInfo describes the verified access token of a request.
//
// The raw token is for a token exchange (RFC 8693) with its issuer only: the
// server MUST NOT forward it to other services (2026-07-28
// basic/authorization §Access Token Privilege Restriction).
type TokenInfo struct {
	// Issuer is the issuer identifier (the token's iss).
	Issuer string
	// ClientID is the OAuth client the token was issued to, or "".
	ClientID string
	// Subject is the user (the token's sub), or "". It identifies the user
	// only at Issuer: another trusted issuer may give the same value to
	// someone else (RFC 7519 §4.1.2: sub is locally unique to its issuer;
	// RFC 9068 §2.2), and a token a client obtained for itself (the client
	// credentials grant) names no subject, or names the client. Key a
	// caller's data by the principal, Issuer, ClientID and Subject together,
	// as core keys sessions and request state (core.Principal), never by
	// Subject alone; refuse or keep apart a caller with neither Subject nor
	// ClientID, since every such caller of an issuer looks the same.
	Subject string
	// Scopes are the granted scopes plus the scopes they imply
	// (Options.Implies).
	Scopes []string
	// Audience is the token's aud.
	Audience []string
	// Expiry is the token's exp.
	Expiry time.Time
	// Claims holds every claim (JWT payload or introspection response).
	// Callers must not modify it.
	Claims map[string]json.RawMessage
	// Token is the raw bearer token.
	Token Token
	// DPoPThumbprint is, for a DPoP-bound token presented with a valid
	// proof, the RFC 7638 thumbprint of the client's key (the token's
	// cnf.jkt); "" for a Bearer token.
	DPoPThumbprint string

	entry *resourceEntry
	state *callState
}

// callState is what the ProtectedResource keeps with a request's TokenInfo (copies
// of the TokenInfo share it): the scopes of the operation being performed,
// for the challenges of RequireScopes.
type callState struct {
	info TokenInfo // allocated together
	res  *ProtectedResource
	op   atomic.Pointer[opScopes]
}

// opScopes are the scopes an authorized operation needs beyond Required.
type opScopes struct {
	static, dynamic []string
}

// LogValue implements [slog.LogValuer]: issuer, client, subject and scopes,
// never the token or the claims.
func (t *TokenInfo) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("issuer", t.Issuer),
		slog.String("client", t.ClientID),
		slog.String("subject", t.Subject),
		slog.Any("scopes", t.Scopes),
	)
}

type tokenInfoKey struct{}

// TokenInfoFromContext returns the token of the request whose context is
// ctx (a handler's context), or nil when the request was not authenticated
// by a [ProtectedResource].
func TokenInfoFromContext(ctx context.Context) *TokenInfo {
	t, _ := ctx.Value(tokenInfoKey{}).(*TokenInfo)
	return t
}
