package core

import (
	"encoding/json"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
	"github.com/mcpfn/mcpfn/mcp"
)

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

// HTTP header names of the Streamable HTTP transport (see the mcp constants
// of the same names).
const (
	HeaderProtocolVersion = mcp.HeaderProtocolVersion
	HeaderMethod          = mcp.HeaderMethod
	HeaderName            = mcp.HeaderName
	HeaderSessionID       = mcp.HeaderSessionID
	// HeaderParamPrefix starts the headers that mirror tool arguments
	// declared with x-mcp-header.
	HeaderParamPrefix = mcp.HeaderParamPrefix
)

// EncodeHeaderValue encodes a value for Mcp-Name or an Mcp-Param-* header as
// clients must (mcp.EncodeHeaderValue).
func EncodeHeaderValue(v string) string { return mcp.EncodeHeaderValue(v) }

// The protocol's wire types live in package mcp, which the client shares;
// these aliases keep server code short (core.Tool is mcp.Tool). Each one's
// documentation is its mcp type's.
type (
	// Implementation names and versions an MCP client or server.
	Implementation = mcp.Implementation
	// Icon is an image a client may show for a tool, prompt, resource or server.
	Icon = mcp.Icon
	// Meta is a free-form _meta object.
	Meta = mcp.Meta
	// Role is the sender of a prompt or sampling message.
	Role = mcp.Role
	// Annotations are hints to the client about a content block or resource.
	Annotations = mcp.Annotations
	// ClientCapabilities are what a client declares it can do.
	ClientCapabilities = mcp.ClientCapabilities
	// ElicitationCapabilities declares the elicitation modes a client supports.
	ElicitationCapabilities = mcp.ElicitationCapabilities
	// SamplingCapabilities declares sampling support.
	SamplingCapabilities = mcp.SamplingCapabilities
	// RootsCapabilities declares roots support.
	RootsCapabilities = mcp.RootsCapabilities
	// ServerCapabilities are what the server advertises.
	ServerCapabilities = mcp.ServerCapabilities
	// ToolCapabilities is the tools entry of ServerCapabilities.
	ToolCapabilities = mcp.ToolCapabilities
	// ResourceCapabilities is the resources entry of ServerCapabilities.
	ResourceCapabilities = mcp.ResourceCapabilities
	// PromptCapabilities is the prompts entry of ServerCapabilities.
	PromptCapabilities = mcp.PromptCapabilities
	// CacheScope says who may share a cached result.
	CacheScope = mcp.CacheScope
	// LoggingLevel is a syslog severity used by notifications/message.
	LoggingLevel = mcp.LoggingLevel
	// ToolAnnotations are untrusted hints about a tool's behaviour.
	ToolAnnotations = mcp.ToolAnnotations
	// Tool defines a tool, wire fields only; register it with AddTool, whose
	// ToolOptions say how the server treats it.
	Tool = mcp.Tool
	// CallToolResult is the complete result of tools/call.
	CallToolResult = mcp.CallToolResult
	// Resource is a resource the server can read.
	Resource = mcp.Resource
	// ResourceTemplate describes a family of resources by an RFC 6570 URI template.
	ResourceTemplate = mcp.ResourceTemplate
	// ResourceContents is the text or binary content of a resource.
	ResourceContents = mcp.ResourceContents
	// ReadResourceResult is the complete result of resources/read.
	ReadResourceResult = mcp.ReadResourceResult
	// Prompt is a prompt template as listed by prompts/list.
	Prompt = mcp.Prompt
	// PromptArgument is one argument of a prompt.
	PromptArgument = mcp.PromptArgument
	// PromptMessage is one message of a prompt.
	PromptMessage = mcp.PromptMessage
	// GetPromptResult is the complete result of prompts/get.
	GetPromptResult = mcp.GetPromptResult
	// CompletionReference is the ref of a completion/complete request.
	CompletionReference = mcp.CompletionReference
	// CompleteParams are the params of completion/complete.
	CompleteParams = mcp.CompleteParams
	// Completion is the completion entry of a CompleteResult.
	Completion = mcp.Completion
	// CompleteResult is the result of completion/complete.
	CompleteResult = mcp.CompleteResult
	// Root is a root the client exposes (roots/list).
	Root = mcp.Root
	// ListRootsResult is the client's answer to roots/list.
	ListRootsResult = mcp.ListRootsResult
	// ListToolsResult is one page of tools/list; an advanced list handler
	// (ServerOptions.ListToolsHandler) returns it.
	ListToolsResult = mcp.ListToolsResult
	// SubscriptionFilter is the set of change notifications a
	// subscriptions/listen request opts in to.
	SubscriptionFilter = mcp.SubscriptionFilter
	// Content is a content block of a tool result, prompt message or
	// sampling message.
	Content = mcp.Content
	// TextContent is a text block.
	TextContent = mcp.TextContent
	// ImageContent is a base64 image block.
	ImageContent = mcp.ImageContent
	// AudioContent is a base64 audio block.
	AudioContent = mcp.AudioContent
	// ResourceLink is a link to a resource the client may read.
	ResourceLink = mcp.ResourceLink
	// EmbeddedResource is a resource's contents inlined in a content block.
	EmbeddedResource = mcp.EmbeddedResource
)

// Roles.
const (
	RoleUser      = mcp.RoleUser
	RoleAssistant = mcp.RoleAssistant
)

// Cache scopes.
const (
	// CacheScopePrivate: reusable only within the same authorization context.
	CacheScopePrivate = mcp.CacheScopePrivate
	// CacheScopePublic: holds no user-specific data; any cache may share it.
	CacheScopePublic = mcp.CacheScopePublic
)

// Logging levels, lowest first.
const (
	LevelDebug     = mcp.LevelDebug
	LevelInfo      = mcp.LevelInfo
	LevelNotice    = mcp.LevelNotice
	LevelWarning   = mcp.LevelWarning
	LevelError     = mcp.LevelError
	LevelCritical  = mcp.LevelCritical
	LevelAlert     = mcp.LevelAlert
	LevelEmergency = mcp.LevelEmergency
)

// UnmarshalContent decodes one content block (mcp.UnmarshalContent).
func UnmarshalContent(data []byte) (Content, error) { return mcp.UnmarshalContent(data) }

// appendImplementation encodes impl as encoding/json would, without
// reflection (it runs at every cold start).
func appendImplementation(b []byte, impl *Implementation) []byte {
	b = jsonwire.AppendString(append(b, `{"name":`...), impl.Name)
	b = jsonwire.AppendString(append(b, `,"version":`...), impl.Version)
	for _, f := range [...]struct{ k, v string }{{"title", impl.Title}, {"description", impl.Description}} {
		if f.v != "" {
			b = jsonwire.AppendString(append(append(append(b, `,"`...), f.k...), `":`...), f.v)
		}
	}
	if len(impl.Icons) > 0 {
		if ij, err := json.Marshal(impl.Icons); err == nil {
			b = append(append(b, `,"icons":`...), ij...)
		}
	}
	if impl.WebsiteURL != "" {
		b = jsonwire.AppendString(append(b, `,"websiteUrl":`...), impl.WebsiteURL)
	}
	return append(b, '}')
}

// missingCaps returns the part of want that c lacks, or nil when c has it all.
func missingCaps(c, want *ClientCapabilities) *ClientCapabilities {
	if want == nil {
		return nil
	}
	var m ClientCapabilities
	found := false
	if want.Elicitation != nil {
		needForm := want.Elicitation.Form != nil || want.Elicitation.URL == nil
		needURL := want.Elicitation.URL != nil
		if (needForm && !c.SupportsFormElicitation()) || (needURL && !c.SupportsURLElicitation()) {
			m.Elicitation = want.Elicitation
			found = true
		}
	}
	if want.Sampling != nil && (!c.SupportsSampling() ||
		(want.Sampling.Tools != nil && c.Sampling.Tools == nil) ||
		(want.Sampling.Context != nil && c.Sampling.Context == nil)) {
		m.Sampling = want.Sampling
		found = true
	}
	if want.Roots != nil && !c.SupportsRoots() {
		m.Roots = &RootsCapabilities{}
		found = true
	}
	for k, v := range want.Extensions {
		if c == nil || c.Extensions[k] == nil {
			if m.Extensions == nil {
				m.Extensions = map[string]map[string]any{}
			}
			m.Extensions[k] = v
			found = true
		}
	}
	if !found {
		return nil
	}
	return &m
}

// levelRank returns the severity of l (0 = debug) or -1 for an unknown level.
func levelRank(l LoggingLevel) int {
	switch l {
	case LevelDebug:
		return 0
	case LevelInfo:
		return 1
	case LevelNotice:
		return 2
	case LevelWarning:
		return 3
	case LevelError:
		return 4
	case LevelCritical:
		return 5
	case LevelAlert:
		return 6
	case LevelEmergency:
		return 7
	}
	return -1
}

// cloneCaps returns a deep copy of c (an empty value for nil), so that a handler
// can change what it was given without changing what the server caches.
func cloneCaps(c *ClientCapabilities) *ClientCapabilities {
	if c == nil {
		return &ClientCapabilities{}
	}
	d := &ClientCapabilities{
		Experimental: cloneNested(c.Experimental),
		Extensions:   cloneNested(c.Extensions),
	}
	if e := c.Elicitation; e != nil {
		d.Elicitation = &ElicitationCapabilities{Form: cloneObject(e.Form), URL: cloneObject(e.URL)}
	}
	if sm := c.Sampling; sm != nil {
		d.Sampling = &SamplingCapabilities{Context: cloneObject(sm.Context), Tools: cloneObject(sm.Tools)}
	}
	if r := c.Roots; r != nil {
		rc := *r
		d.Roots = &rc
	}
	return d
}

func cloneNested(m map[string]map[string]any) map[string]map[string]any {
	if m == nil {
		return nil
	}
	d := make(map[string]map[string]any, len(m))
	for k, v := range m {
		d[k] = cloneObject(v)
	}
	return d
}

// cloneObject deep-copies a decoded JSON object, keeping nil as nil.
func cloneObject(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	d := make(map[string]any, len(m))
	for k, v := range m {
		d[k] = cloneJSONValue(v)
	}
	return d
}

func cloneJSONValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return cloneObject(v)
	case []any:
		d := make([]any, len(v))
		for i, e := range v {
			d[i] = cloneJSONValue(e)
		}
		return d
	}
	return v
}

// Methods of input requests (see the mcp constants of the same names).
const (
	MethodElicit        = mcp.MethodElicit
	MethodCreateMessage = mcp.MethodCreateMessage
	MethodListRoots     = mcp.MethodListRoots
)

// Input requests and answers are wire types of package mcp, aliased here.
type (
	// InputRequest is one request for input inside an input_required result:
	// an elicitation, a sampling request or a roots listing. Build it with
	// ElicitForm, ElicitURL, a Form, Sample or ListRoots.
	InputRequest = mcp.InputRequest
	// InputRequests maps server-chosen keys to input requests.
	InputRequests = mcp.InputRequests
	// ElicitFormParams are the params of a form-mode elicitation.
	ElicitFormParams = mcp.ElicitFormParams
	// ElicitURLParams are the params of a URL-mode elicitation.
	ElicitURLParams = mcp.ElicitURLParams
	// ModelHint names a model family for sampling.
	ModelHint = mcp.ModelHint
	// ModelPreferences guide the client's model choice for sampling.
	ModelPreferences = mcp.ModelPreferences
	// SamplingMessage is one message of a sampling request.
	SamplingMessage = mcp.SamplingMessage
	// CreateMessageParams are the params of sampling/createMessage.
	CreateMessageParams = mcp.CreateMessageParams
	// ElicitResult is the client's answer to an elicitation.
	ElicitResult = mcp.ElicitResult
	// CreateMessageResult is the client's answer to a sampling request.
	CreateMessageResult = mcp.CreateMessageResult
)

// The actions of an elicitation answer (ElicitResult.Action; see the mcp
// constants of the same names).
const (
	ActionAccept  = mcp.ActionAccept
	ActionDecline = mcp.ActionDecline
	ActionCancel  = mcp.ActionCancel
)
