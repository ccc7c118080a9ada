// Package authas tests package auth against the project's real
// authorization server (internal/oauthtest) over loopback HTTP: JWT and
// introspection verification, key rotation and outages, negative caches,
// scopes, token binding, and the benchmarks of the verification path.
//
// The tests live here, in the test module, and not beside package auth,
// because a module's go.mod records the requirements of its tests too and
// module graph pruning keeps them in every user's graph: auth's go.mod must
// not require internal/oauthtest, which is never published. What needs
// auth's unexported state (the bounds of its token caches) is tested inside
// package auth.
package authas
