package core

import "github.com/mcpfn/mcpfn/mcp"

// Protocol revisions this package serves (see the mcp constants of the same
// names).
const (
	// ProtocolVersion20260728 is the stateless revision: every request carries its
	// version and client capabilities in params._meta, and there is no session.
	ProtocolVersion20260728 = mcp.ProtocolVersion20260728
	// ProtocolVersion20251125 is the newest revision with the initialize handshake.
	ProtocolVersion20251125 = mcp.ProtocolVersion20251125
	// ProtocolVersion20250618 added the MCP-Protocol-Version header, elicitation and
	// structured tool output.
	ProtocolVersion20250618 = mcp.ProtocolVersion20250618
	// ProtocolVersion20250326 introduced Streamable HTTP and JSON-RPC batches.
	ProtocolVersion20250326 = mcp.ProtocolVersion20250326
)

// Reserved _meta keys of the 2026-07-28 revision (see the mcp constants of
// the same names).
const (
	MetaProtocolVersion    = mcp.MetaProtocolVersion
	MetaClientCapabilities = mcp.MetaClientCapabilities
	MetaClientInfo         = mcp.MetaClientInfo
	MetaLogLevel           = mcp.MetaLogLevel
	MetaServerInfo         = mcp.MetaServerInfo
	MetaSubscriptionID     = mcp.MetaSubscriptionID
)
