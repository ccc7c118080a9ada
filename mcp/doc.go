// Package mcp is the wire vocabulary of the Model Context Protocol that
// mcpfn's server (package core) and client (package client) share: the
// protocol's types and constants, one error type, and one reader and
// writer of WWW-Authenticate challenges. It holds data and encoders only:
// no transport, no schema machinery, nothing beyond the standard library,
// so a client links none of the server's dependencies.
//
// The names and JSON members are the specification's (schema.ts of each
// revision), as in the official Go SDK's package mcp: a porting reader
// finds Tool, CallToolResult, TextContent and ListToolsResult with the
// meaning they have there. core aliases the types a server author writes
// (core.Tool is mcp.Tool), so server code may use either name.
//
// # Revisions
//
// The types cover the stateless 2026-07-28 revision (ProtocolVersion20260728:
// per-request _meta, server/discover, multi round-trip input requests,
// cache hints, subscriptions/listen) and the initialize-based revisions
// 2025-11-25, 2025-06-18 and 2025-03-26. Members one revision lacks are
// optional (omitempty), so one type serves every revision; which members a
// revision may carry is the sender's business (core, client).
//
// # Cursors
//
// Every list result (ListToolsResult, ListPromptsResult,
// ListResourcesResult, ListResourceTemplatesResult) has NextCursor
// *string: nil is the last page, and any other value is the opaque cursor
// of the next page, the empty string included (2026-07-28
// server/utilities/pagination: "an empty string is a valid cursor").
//
// # Raw when received
//
// Fields a sender fills with "any JSON value" are of type any:
// Tool.InputSchema and Tool.OutputSchema, InputRequest.Params,
// CallToolResult.StructuredContent. Sending, they take any value that
// marshals (a json.RawMessage, a map, a struct). Decoding, their
// UnmarshalJSON sets them to a json.RawMessage holding the bytes as
// received, so that a client never loses key order, number precision or
// keywords it does not know.
//
// # Errors
//
// *Error is the one protocol error: code, message, raw data and a cause
// that is never sent. A server returns it to answer with a JSON-RPC error
// (WithData, WithHTTP); a client gets it for every JSON-RPC error
// response, with the request's method and the response's HTTP status.
// errors.Is matches it by code against ErrHeaderMismatch (-32020),
// ErrMissingCapability (-32021) and ErrUnsupportedVersion (-32022), whose
// data Supported, Requested and RequiredCapabilities read.
//
// # WWW-Authenticate
//
// ParseChallenges, ParseWWWAuthenticate and BearerChallenge read the
// challenges of a WWW-Authenticate header (RFC 9110 §11.6.1, RFC 6750 §3,
// RFC 9728 §5.1); FormatChallenge writes one. Package auth writes the
// protected resource's challenges with it, package client and client/oauth
// read them with it.
package mcp
