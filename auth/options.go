package auth

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/mcpfn/mcpfn/core"
)

// Defaults.
const (
	// DefaultLeeway is the clock skew tolerated on exp, nbf and iat.
	DefaultLeeway = time.Minute
	// DefaultJWKSTTL is how long a fetched JWKS is used before it is
	// refetched (lazily, by the next request that needs it).
	DefaultJWKSTTL = 15 * time.Minute
	// DefaultJWKSMinInterval is the least time between two fetches caused by
	// unknown key ids or failures.
	DefaultJWKSMinInterval = 30 * time.Second
	// DefaultFetchTimeout bounds a JWKS, metadata or introspection request.
	DefaultFetchTimeout = 5 * time.Second
	// DefaultIntrospectionCacheTTL bounds how long an introspection answer is
	// reused (never beyond the token's exp).
	DefaultIntrospectionCacheTTL = time.Minute
	// DefaultIntrospectionCacheSize bounds the cached introspection answers
	// (active ones, and separately inactive ones).
	DefaultIntrospectionCacheSize = 10000
	// DefaultIntrospectionNegativeCacheTTL is how long an inactive answer
	// (an unknown, expired or revoked token, or one that is not an access
	// token) is reused: repeating an unknown token then costs the
	// authorization server one call per period, while a token that its
	// server reported inactive by mistake (a replica that has not yet seen
	// a fresh token) recovers within seconds.
	DefaultIntrospectionNegativeCacheTTL = 5 * time.Second
	// DefaultIntrospectionConcurrency bounds the introspection requests in
	// flight at once.
	DefaultIntrospectionConcurrency = 16
	// DefaultJWTCacheSize bounds the cache of verified JWTs.
	DefaultJWTCacheSize = 10000
	// DefaultRetryAfter is the Retry-After of a 503 answered when the
	// authorization server is unavailable.
	DefaultRetryAfter = 5 * time.Second
	// DefaultTokenType is the JWT "typ" accepted by default (RFC 9068 §2.1).
	DefaultTokenType = "at+jwt"
	// MetadataPathPrefix is the well-known prefix of protected resource
	// metadata (RFC 9728 §3).
	MetadataPathPrefix = "/.well-known/oauth-protected-resource"
)

const (
	maxJWKSBytes          = 256 << 10
	maxJWKSKeys           = 64
	maxIntrospectionBytes = 64 << 10
)

// Options configures New. New copies what it needs; later changes have no
// effect.
type Options struct {
	// Resource is the canonical URI of the MCP endpoint as clients use it,
	// e.g. "https://mcp.example.com/mcp" (RFC 8707 §2; 2026-07-28
	// basic/authorization §Canonical Server URI): https (http only on a
	// loopback host), no fragment. It is never derived from the request.
	// Required unless Resources is set.
	Resource string
	// Resources lists several canonical URIs of one server reached under
	// different hosts (virtual hosting); a request's Host picks the one it
	// is for, and a request whose Host matches none is answered 421.
	// Resource, when also set, is added to them.
	Resources []string
	// MetadataURL is the URL of the protected resource metadata document as
	// clients reach it, when that differs from the well-known URL derived
	// from the resource (an API Gateway stage prefix, a Cloud Functions
	// gen1 URL). Its path, as the handler sees it, serves the document too,
	// and challenges name this URL. Only with a single resource.
	MetadataURL string
	// MetadataPath is the path of MetadataURL as the handler sees it, when
	// the platform strips a prefix before the function (Cloud Functions
	// gen1 strip the function's name). Empty means MetadataURL's path.
	MetadataPath string
	// ResourceName is the human-readable resource_name of the document.
	ResourceName string

	// Issuers are the authorization servers whose tokens are accepted. At
	// least one; at most one may use introspection.
	Issuers []Issuer
	// Audiences are extra accepted "aud" values besides the resource URI,
	// for the tokens of every issuer (see Issuer.Audiences for one issuer's).
	Audiences []string

	// Required are the scopes every request needs.
	Required []string
	// ToolScopes are the scopes a tools/call of a tool needs, by tool name.
	ToolScopes map[string][]string
	// PromptScopes are the scopes a prompts/get needs, by prompt name, and
	// a completion/complete of the prompt's arguments too (core.Operation.Ref
	// "ref/prompt"): completions can reveal what the prompt would.
	PromptScopes map[string][]string
	// HideUnauthorized leaves out of tools/list and prompts/list what the
	// caller's token lacks the ToolScopes or PromptScopes for
	// (core.ListAuthorizer). A direct tools/call or prompts/get of such a
	// tool or prompt is still answered 403 insufficient_scope naming the
	// scopes to obtain, not as unknown: the challenge is how a client steps
	// up (2026-07-28 basic/authorization §Scope Challenge Handling), and
	// the scopes it names are published in the metadata's
	// scopes_supported anyway. To make a feature not exist for some callers,
	// use core.ServerOptions.Filter. The run-time scopes of Scopes and
	// RequireScopes, which may depend on arguments, hide nothing.
	HideUnauthorized bool
	// Scopes, when set, returns extra scopes an operation needs, e.g.
	// depending on its arguments, or the scopes of a resource (resources/read
	// names the URI; completion/complete with Ref "ref/resource" names the
	// template). It runs per request and must be fast and safe for
	// concurrent use.
	Scopes func(ctx context.Context, op core.Operation) []string
	// Implies declares a scope hierarchy: a scope implies the listed ones
	// (transitively), and a token granting it satisfies them.
	Implies map[string][]string
	// ScopesSupported is the document's scopes_supported. Nil means the
	// Required scopes plus those of ToolScopes and PromptScopes.
	ScopesSupported []string

	// JWTCacheSize bounds the cache of verified JWTs (by SHA-256 of the
	// token, each until the earlier of its exp and the issuer's JWKSTTL),
	// which spares repeated signature checks of the same token. Zero means
	// DefaultJWTCacheSize; negative disables it. Time and audience checks
	// run on every request either way.
	JWTCacheSize int

	// Leeway is the tolerated clock skew. Zero means DefaultLeeway.
	Leeway time.Duration
	// RetryAfter is sent with 503 answers. Zero means DefaultRetryAfter.
	RetryAfter time.Duration
	// HTTPClient fetches JWKS and metadata and calls introspection. Nil
	// means a client with DefaultFetchTimeout. The resource uses a copy
	// whose CheckRedirect follows no redirect: a 3xx answer is a failure
	// (503 to the caller, and a log line naming the Location), so that an
	// introspection form is never re-sent elsewhere; configure final URLs.
	// Every request is also bounded by DefaultFetchTimeout, and every
	// response body by a size limit, whatever the client's settings.
	HTTPClient *http.Client
	// DPoP, when set, makes the resource accept DPoP-bound tokens with
	// their proofs (RFC 9449; SEP-1932), and with DPoP.Required only
	// those. Nil accepts Bearer tokens only. Either way, a DPoP-bound
	// token presented as a Bearer token is refused. See DPoPOptions.
	DPoP *DPoPOptions
	// Logger receives warnings about the authorization servers. Nil means
	// slog.Default() (as it is when New runs); slog.New(slog.DiscardHandler)
	// silences them. Tokens are never logged.
	Logger *slog.Logger
}

// Issuer configures one accepted authorization server.
type Issuer struct {
	// Issuer is the issuer identifier, the exact "iss" of its tokens.
	// Required.
	Issuer string
	// JWKSURL is the issuer's jwks_uri. Empty means read it from the
	// issuer's RFC 8414 (or OpenID Connect) metadata, whose "issuer" must
	// equal Issuer.
	JWKSURL string
	// Introspection, when set, makes the resource introspect this issuer's
	// tokens (opaque tokens, and JWTs naming it) instead of verifying them.
	Introspection *Introspection
	// Audiences are extra accepted "aud" values for this issuer's tokens
	// only, besides the resource URI and Options.Audiences: an
	// authorization server that names the resource by its own identifier
	// (a client id, an API name) gets it accepted without the other issuers'
	// tokens carrying that audience being accepted too (RFC 9068 §4: the
	// resource must check that aud identifies it; 2026-07-28
	// basic/authorization §Token Validation: accept only tokens issued for
	// this server).
	Audiences []string
	// TokenTypes are the accepted JWT "typ" values, compared without case
	// and without an "application/" prefix. Nil means {DefaultTokenType};
	// {"*"} accepts any, including none.
	TokenTypes []string
	// ScopeClaim names the claim holding the granted scopes (a
	// space-separated string or an array). Empty means "scope".
	ScopeClaim string
	// ClientClaim names the claim holding the client id. Empty means
	// "client_id" (RFC 9068 §2.2); "azp" is common for OpenID providers.
	ClientClaim string
	// JWKSTTL is how long fetched keys are used. Zero means DefaultJWKSTTL.
	JWKSTTL time.Duration
	// JWKSMinInterval is the least time between fetches for unknown key ids,
	// and after a failed fetch. While no key was ever fetched, a failed fetch
	// is retried after a second instead (or JWKSMinInterval, when shorter):
	// until one succeeds no token of the issuer verifies. Zero means
	// DefaultJWKSMinInterval.
	JWKSMinInterval time.Duration
}

// Introspection configures RFC 7662 token introspection.
type Introspection struct {
	// Endpoint is the introspection endpoint URL. Required.
	Endpoint string
	// ClientID and ClientSecret authenticate the resource to the endpoint
	// (client_secret_basic). Required.
	ClientID, ClientSecret string
	// CacheTTL bounds how long an answer is reused. Zero means
	// DefaultIntrospectionCacheTTL; negative disables the cache.
	CacheTTL time.Duration
	// CacheSize bounds the cached answers: active ones, and separately
	// inactive ones, so that unknown tokens cannot evict the answers of
	// valid ones. Zero means DefaultIntrospectionCacheSize.
	CacheSize int
	// NegativeCacheTTL is how long an inactive answer is reused, by the
	// SHA-256 of the token: "active": false, or an active token whose
	// token_type (or token_use) says it is not an access token. Only
	// answers count: an error or an unreadable answer (503 to the caller)
	// is never remembered. Zero means DefaultIntrospectionNegativeCacheTTL;
	// negative disables it.
	NegativeCacheTTL time.Duration
	// MaxConcurrent bounds the introspection requests in flight at once
	// (concurrent requests with one token share one). A request that needs
	// another while MaxConcurrent are in flight gets 503 with Retry-After at
	// once, as during an outage of the authorization server, without
	// calling it. Zero or negative means DefaultIntrospectionConcurrency.
	MaxConcurrent int
}
