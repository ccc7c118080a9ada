// Package oauth authorizes an MCP client (package client) with OAuth 2.1,
// as the MCP authorization specification describes it for both eras
// (2026-07-28 basic/authorization, 2025-11-25 basic/authorization).
//
// A *Source is a client.TokenSource and a client.Challenger: give it to
// client.Options.TokenSource. It sends no token until the server first
// answers 401; then it discovers, registers, authorizes and hands the
// client a token to retry with.
//
//	lb, _ := oauth.NewLoopback(openBrowser)
//	defer lb.Close()
//	src := oauth.New(&oauth.Config{RedirectURL: lb.RedirectURL(), Authorize: lb.Authorize})
//	c, err := client.Connect(ctx, "https://mcp.example.com/mcp", &client.Options{TokenSource: src})
//
// # Discovery
//
// On a 401 the Source reads the Bearer challenge of WWW-Authenticate and
// fetches the protected resource metadata (RFC 9728) from its
// resource_metadata URL, else from the path-form and then the root
// well-known URL of the endpoint. The document's resource must have the
// endpoint's origin and a path that prefixes the endpoint's on a segment
// boundary, else the Source stops (ErrResourceMismatch); it is sent as the
// RFC 8707 resource of every authorization and token request. The first of
// authorization_servers is used; its metadata is looked up at the RFC 8414
// path-insertion URL, then the OpenID Connect ones, and a document whose
// issuer is not exactly that issuer is never used (ErrIssuerMismatch).
// Metadata requests follow no redirects and are limited to 256 KiB.
//
// # Where a flow may go
//
// The MCP endpoint, and every URL the flow fetches or posts to
// (metadata, registration, token, authorization endpoints, the client
// metadata document URL), must use https; plain http only on a loopback
// host (2026-07-28 basic/authorization, Communication Security), else
// ErrInsecureURL. The flow of a loopback endpoint may go anywhere else. The
// flow of any other endpoint is remote: a URL naming a loopback, private,
// link-local, unspecified or other non-public address, in any spelling of
// an IP literal, is refused (ErrLocalAddress), and so is a connection to a
// name that resolves to one when it is dialed (the check runs on the
// addresses of each connection, so DNS rebinding does not get around it).
// A remote server thus cannot make the client call local admin APIs or a
// cloud metadata endpoint. Config.AllowPrivateNetwork lifts the address
// rule for deployments inside one private network. Behind an HTTP proxy the
// proxy resolves names, and only the URL check applies.
//
// # Registration
//
// In this order: Config.Clients (pre-registered, per issuer: a client is
// used only with the issuer in its Client.Issuer, else ErrClientIssuer, so
// its secret or key never goes to an authorization server a hostile
// resource names); the Client
// ID Metadata Document URL (Config.ClientMetadataURL) when the server sets
// client_id_metadata_document_supported; dynamic client registration
// (RFC 7591) with application_type and the authorization_code and
// refresh_token grants. Registrations are kept per issuer: when the
// protected resource names a new authorization server, nothing of the old
// one (client, tokens, scopes) is used there. The token endpoint
// authentication is client_secret_basic, client_secret_post, none or
// private_key_jwt, as the registration and the server's metadata say.
//
// # Authorization
//
// The authorization code flow uses PKCE S256 (servers that do not list it
// are refused, ErrNoPKCE), a random state, and checks the response's iss
// against the issuer recorded before the user agent left, by simple string
// comparison, as the table of 2026-07-28 §Authorization Response
// Validation says; on a mismatch the response's error fields are ignored.
// The user-agent step is Config.Authorize: Loopback opens a browser and
// listens on 127.0.0.1 for the redirect; Headless GETs the authorization
// URL and reads the redirect's Location without following it (for servers
// that approve without a user).
//
// Scopes: those of the challenge, else the resource's scopes_supported,
// else none (no scope parameter). offline_access is added when, and only
// when, the authorization server lists it in scopes_supported (and some
// scope is requested). A 403 with error="insufficient_scope" authorizes
// again with the union of the scopes requested before and those
// challenged. The Source never retries by itself: package client bounds an
// operation to three attempts.
//
// Tokens are refreshed when they are about to expire, and a 401 with a
// refresh token at hand tries the refresh first. When the authorization
// server answers 503 (or temporarily_unavailable) the current token is
// kept and the Source backs off (Retry-After, else doubling from one
// second to five minutes), answering challenges with ErrBackoff meanwhile.
//
// # Keeping tokens
//
// Config.Store keeps the tokens and the dynamic registration beyond the
// process (Store: Load and Save, by protected resource and issuer, so that
// a token never goes to a resource or through a server other than the
// ones it was issued for; 2025-11-25 basic/authorization §Token Audience
// Binding). The Source loads the entry once the first 401 has been through
// discovery: an unexpired access token is sent as it is, an expired one is
// refreshed (RFC 6749 §6) with the saved client, and only a refused
// refresh, or more scopes than were saved, needs the user agent. Every
// token obtained afterwards (authorization, refresh, step-up) replaces the
// entry. The tokens are used only with the client they were issued to.
// A saved registration serves a new authorization code flow only with the
// redirect URI it was registered with: a loopback redirect (RFC 8252
// §7.3) gets a new port in each process, and a server may compare redirect
// URIs exactly, so the client registers again instead.
//
// # Timeouts
//
// Every metadata, registration and token request is bounded as a whole,
// answer included, by Config.RequestTimeout (DefaultRequestTimeout, 30 s),
// and the user-agent step by Config.AuthorizeTimeout
// (DefaultAuthorizeTimeout, 10 min); errors of either match
// client.ErrTimeout and context.DeadlineExceeded.
//
// # Extensions
//
// Config.Grant selects the grant: GrantClientCredentials for machine
// clients (a pre-registered client with a secret, or a Key for
// private_key_jwt, RFC 7523), or GrantJWTBearer for enterprise-managed
// authorization: Config.Assertion supplies an Identity Assertion JWT
// Authorization Grant (IDJAG obtains one from an identity provider by
// RFC 8693 token exchange), which is traded for the access token; only
// the access token is kept. The same grant serves workload identity
// federation (MCP SEP-1933): AssertionFile makes the JWT a platform gives
// a workload (a projected service account token, a cloud's identity token
// file) the assertion, read anew for every token.
//
// Config.DPoP binds tokens to a key with DPoP (RFC 9449; MCP SEP-1932):
// token requests carry a proof of the Source's key (Config.DPoPKey, or one
// it makes), a token issued with token_type DPoP is sent with a fresh
// proof on every request to the MCP endpoint (the Source is a
// client.RequestAuthorizer), and the nonces the authorization server and
// the MCP server demand go into the proofs. DPoPAuto (the default) uses
// DPoP with authorization servers that advertise it, DPoPRequire refuses
// Bearer tokens, DPoPOff never sends a proof.
//
// # Errors
//
// Error answers of the token, authorization and registration endpoints are
// *OAuthError (errors.As). The sentinel errors (ErrResourceMismatch,
// ErrIssuerMismatch, ErrNoPKCE, ...) are matched with errors.Is.
package oauth
