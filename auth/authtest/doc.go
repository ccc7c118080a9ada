// Package authtest runs a real OAuth 2.1 authorization server on loopback,
// for tests of a protected resource (package auth) and of clients, as
// net/http/httptest runs an HTTP server and store/storetest checks a store.
// Nothing is mocked: it speaks HTTP on an httptest.Server and signs tokens
// with lestrrat-go/jwx, which package auth already requires, so importing
// it adds no module to a user's graph. Command authtest (cmd/authtest)
// serves it for tests driven from outside Go.
//
// It serves, under its issuer URL (Server.Issuer):
//
//   - RFC 8414 metadata at /.well-known/oauth-authorization-server (path
//     insertion for issuers with a path) and OpenID Connect discovery at
//     /.well-known/openid-configuration (both forms);
//   - a JWKS with an RSA and an EC P-256 key, rotated by Server.Rotate
//     (the previous generation stays published until the next rotation);
//   - /authorize, which approves at once: it redirects to redirect_uri with
//     code, state and iss (RFC 9207); PKCE S256 is required;
//   - /token for the authorization_code (PKCE verified, resource per
//     RFC 8707 becoming the aud), refresh_token (refresh tokens rotate:
//     single use) and client_credentials grants, RFC 8693 token exchange of
//     an ID token (IDToken) for an ID-JAG (the server as an enterprise
//     identity provider), and the RFC 7523 jwt-bearer grant of an ID-JAG
//     from one of Options.IdentityProviders; every request authenticates
//     its client with the method it registered: none, client_secret_basic,
//     client_secret_post or private_key_jwt (Options.AuthMethods);
//   - /register, RFC 7591 dynamic client registration (public and
//     client_secret clients); AddClient and RegisterClient pre-register
//     clients, and Options.ClientIDMetadataDocuments accepts Client ID
//     Metadata Documents;
//   - /introspect, RFC 7662 introspection, authenticated with
//     client_secret_basic (IntrospectionClientID/IntrospectionSecret);
//     SetIntrospectionDown makes it answer 503; refresh tokens are
//     introspected too (active, token_type "refresh_token").
//
// Tests of outbound calls control every endpoint (Endpoint): Hold makes
// its requests wait until
// released (a fetch in flight, deterministically), SetRedirect makes them
// answer 307 to a target under MovedPrefix that serves the real endpoint,
// and JWKSFetches, Introspections, MetadataFetches and Moved count what was
// served. Options.JWKSURI changes the jwks_uri of the metadata, and
// Options.TLS serves https.
//
// Requests lists what each endpoint received (queries, forms, the
// Authorization header, registration bodies), for tests of clients. Options
// shape what a client meets: MetadataPath (one discovery form),
// Metadata (members replaced or removed), Iss and AuthorizeError (the
// authorization response), TokenError (failures of the token endpoint).
//
// Tests mint tokens directly with Mint, MintWith and Opaque. Access tokens
// from /token are JWTs (typ at+jwt) unless Options.OpaqueTokens is set,
// in which case they are opaque and only introspection knows them.
//
// Quick start:
//
//	as := authtest.New(nil)
//	defer as.Close()
//	rs, err := auth.New(&auth.Options{Resource: resourceURL, Issuers: []auth.Issuer{{Issuer: as.Issuer}}})
//	tok := as.Mint(authtest.Claims{Audience: []string{resourceURL}, Scope: "read"})
//
// A Server is safe for concurrent use.
package authtest
