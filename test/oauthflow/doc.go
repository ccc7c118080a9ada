// Package oauthflow tests package client/oauth end to end: a client.Conn
// with an oauth.Source against a protected MCP server (core behind
// adapters/nethttp, checking tokens by RFC 7662 introspection) and the
// project's authorization server, auth/authtest, on loopback. The
// tests live here, in the test module, because auth/authtest belongs to
// the auth module, which requires jwx: a test of package client/oauth
// importing it would put those requirements into the root go.mod, which
// every user of mcpfn inherits. The unit tests of client/oauth (URL and address
// policy, bounds, timeouts, parsers) stay beside it.
package oauthflow
