package mcp

// Protocol revisions (2026-07-28 basic/versioning). A revision is named by
// the date of its last backwards-incompatible change.
const (
	// ProtocolVersion20260728 is the stateless revision: every request carries
	// its version and client capabilities in params._meta, and there is no
	// session.
	ProtocolVersion20260728 = "2026-07-28"
	// ProtocolVersion20251125 is the newest revision with the initialize
	// handshake.
	ProtocolVersion20251125 = "2025-11-25"
	// ProtocolVersion20250618 added the MCP-Protocol-Version header,
	// elicitation and structured tool output.
	ProtocolVersion20250618 = "2025-06-18"
	// ProtocolVersion20250326 introduced Streamable HTTP and JSON-RPC batches.
	ProtocolVersion20250326 = "2025-03-26"
)

// Reserved _meta keys of the 2026-07-28 revision (basic/index §_meta). The
// first four travel in a request's params._meta (protocolVersion and
// clientCapabilities are required on every request), serverInfo in a
// result's _meta, subscriptionId on the result and the notifications of a
// subscriptions/listen stream.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// HTTP header names of the Streamable HTTP transport. MCP-Protocol-Version
// is sent by clients of 2025-06-18 and later; Mcp-Session-Id belongs to the
// legacy revisions (2025-11-25 basic/transports §Session Management);
// Mcp-Method, Mcp-Name and Mcp-Param-* mirror a 2026-07-28 request's body
// (2026-07-28 basic/transports/streamable-http §Request Headers).
const (
	HeaderProtocolVersion = "MCP-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	HeaderSessionID       = "Mcp-Session-Id"
	// HeaderParamPrefix starts the headers that mirror tool arguments
	// declared with x-mcp-header.
	HeaderParamPrefix = "Mcp-Param-"
)

// Methods of input requests: what a 2026-07-28 server asks inside an
// input_required result (basic/patterns/mrtr), and what a legacy server
// sends the client as a request of its own.
const (
	MethodElicit        = "elicitation/create"
	MethodCreateMessage = "sampling/createMessage"
	MethodListRoots     = "roots/list"
)
