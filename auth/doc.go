// Package auth makes an mcpfn server an OAuth 2.1 protected resource
// (2026-07-28 basic/authorization; 2025-11-25 basic/authorization agrees for
// servers): it verifies bearer access tokens, checks scopes per operation,
// answers with RFC 6750 challenges and serves RFC 9728 protected resource
// metadata.
//
// A [ProtectedResource] is a [core.Authenticator]: set it as
// core.ServerOptions.Authenticator and every adapter (net/http, AWS Lambda,
// Google Cloud Functions) gets the same behaviour, after core's Host and
// Origin checks.
//
//	rs, err := auth.New(&auth.Options{
//		Resource: "https://mcp.example.com/mcp",
//		Issuers:  []auth.Issuer{{Issuer: "https://login.example.com"}},
//		Required: []string{"mcp"},
//		ToolScopes: map[string][]string{"delete_file": {"files:write"}},
//	})
//	if err != nil { ... }
//	srv := core.NewServer(impl, &core.ServerOptions{Authenticator: rs})
//
// [FromEnv] builds the same from the MCPFN_AUTH_* environment variables
// that the deploy kits read and the Terraform modules set.
//
// # Tokens
//
// JWT access tokens (RFC 9068) are verified with lestrrat-go/jwx against
// the issuer's JWKS, which is read from Issuer.JWKSURL or the issuer's RFC
// 8414 (or OpenID Connect) metadata. A JWT goes only to the issuer its iss
// names. The checks: an asymmetric alg that fits the key, iss, aud naming
// the resource (or Options.Audiences), exp (required), nbf and iat with
// Options.Leeway, and typ (at+jwt by default). Scopes are the valid RFC 6749
// §3.3 scope-tokens of the scope claim, separated by U+0020 only. Keys are
// fetched lazily on the request path: when older than Issuer.JWKSTTL, and
// when a token names an unknown kid, at most once per
// Issuer.JWKSMinInterval (once a second while no key was ever fetched).
// Concurrent requests share one fetch, which belongs to none of them: a
// client that goes away does not cancel it, and it outlives the request that
// started it by at most DefaultFetchTimeout.
//
// One issuer may instead use RFC 7662 introspection
// (Issuer.Introspection): opaque tokens and JWTs naming that issuer are
// introspected. Active answers are cached by the SHA-256 of the token, never
// beyond the token's exp; inactive ones (and tokens whose token_type says
// they are not access tokens, such as refresh tokens) for a few seconds
// (Introspection.NegativeCacheTTL). Concurrent requests with one token share
// one introspection, and at most Introspection.MaxConcurrent run at once:
// beyond that, 503 with Retry-After.
//
// Outbound requests (metadata, JWKS, introspection) have a timeout and a
// size bound, and follow no redirect; a jwks_uri read from metadata must be
// https, as a configured one must (plain http only on loopback).
//
// # Answers
//
//   - no token: 401 with `WWW-Authenticate: Bearer resource_metadata="…",
//     scope="<Required>"`;
//   - an invalid token: the same plus error="invalid_token";
//   - a repeated or malformed Authorization header, or an access_token query
//     parameter: 400 error="invalid_request";
//   - missing scopes: 403 error="insufficient_scope" whose scope lists every
//     scope the operation needs;
//   - the authorization server unreachable (JWKS, metadata or
//     introspection): 503 with Retry-After, never invalid_token.
//
// Bodies are JSON-RPC errors. [RequireScopes] gives tool handlers the same
// 403 for scopes that depend on what the call does (step-up authorization);
// its challenge names those scopes with every other scope the call needs.
// completion/complete is authorized as its target: a prompt's completions
// need the prompt's PromptScopes.
//
// Verified JWTs are remembered by the SHA-256 of the token (Options.JWTCacheSize,
// never past exp or the JWKS TTL), so a client reusing its token pays for the
// signature once; the time and audience checks run on every request.
//
// # Metadata
//
// The RFC 9728 document is served, unauthenticated, at the well-known URL
// derived from the resource (origin + /.well-known/oauth-protected-resource +
// path). Where the platform's public paths differ from the handler's (an API
// Gateway stage, a Cloud Functions gen1 function name), set
// Options.MetadataURL (and Options.MetadataPath): challenges name it.
//
// # Caller
//
// Handlers read the caller with [TokenInfoFromContext] (issuer, client,
// subject, scopes, claims) or core.Request.Principal. Legacy sessions and
// sealed request state are bound to the principal (issuer, client and
// subject), so a stepped-up token keeps both; key per-caller data the same
// way, never by the subject alone (see TokenInfo.Subject).
//
// # Plain HTTP authentication
//
// [Basic] and [Bearer] check static credentials (or a verify function) in
// constant time and answer 401 with a realm challenge. They are not MCP
// authorization: no metadata, no scopes, no authorization server.
//
// # Testing
//
// Package authtest (github.com/mcpfn/mcpfn/auth/authtest) runs a real
// authorization server on loopback that mints the tokens a test sends: set
// its Issuer as an [Issuer] and its Client as Options.HTTPClient.
package auth
