package auth

import (
	"context"
	"encoding/json"
	"log/slog"
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
	// Subject is the user (the token's sub), or "".
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

	res   *Resource
	entry *resourceEntry
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
// by a [Resource].
func TokenInfoFromContext(ctx context.Context) *TokenInfo {
	t, _ := ctx.Value(tokenInfoKey{}).(*TokenInfo)
	return t
}
