package mcp

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// Implementation names and versions an MCP client or server (2026-07-28
// schema Implementation: the clientInfo and serverInfo _meta values, and the
// legacy initialize's clientInfo and serverInfo). Name and Version are
// required on the wire.
type Implementation struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
	WebsiteURL  string `json:"websiteUrl,omitempty"`
}

// Icon is an image a client may show for a tool, prompt, resource or server
// (2025-11-25 and 2026-07-28 schema Icon).
type Icon struct {
	Src      string   `json:"src"`
	MIMEType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	// Theme is "light" or "dark", or empty.
	Theme string `json:"theme,omitempty"`
}

// Meta is a free-form _meta object. Keys with the io.modelcontextprotocol/
// prefix are reserved (2026-07-28 basic/index §_meta).
type Meta map[string]any

// UnmarshalJSON decodes a _meta object as encoding/json decodes a
// map[string]any (nested objects as map[string]any, numbers as float64;
// null is a nil Meta), with fewer allocations: every result a client
// decodes carries one.
func (m *Meta) UnmarshalJSON(b []byte) error {
	v, err := decodeMeta(b)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Role is the sender of a prompt or sampling message: "user" or "assistant".
type Role string

// Roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Annotations are hints to the client about a content block or resource
// (schema Annotations): who it is for, how important it is (0 to 1), and
// when it last changed (an ISO 8601 timestamp).
type Annotations struct {
	Audience     []Role   `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
}

// ClientCapabilities are what a client declares it can do. In 2026-07-28
// they travel in every request's _meta (MetaClientCapabilities); in legacy
// revisions, once in initialize. A nil field means "not declared"; every
// method accepts a nil *ClientCapabilities, which declares nothing.
type ClientCapabilities struct {
	Elicitation  *ElicitationCapabilities  `json:"elicitation,omitempty"`
	Sampling     *SamplingCapabilities     `json:"sampling,omitempty"`
	Roots        *RootsCapabilities        `json:"roots,omitempty"`
	Experimental map[string]map[string]any `json:"experimental,omitempty"`
	Extensions   map[string]map[string]any `json:"extensions,omitempty"`
}

// ElicitationCapabilities declares the elicitation modes a client supports.
// An empty value (neither Form nor URL) means form mode only (2025-11-25
// client/elicitation §Capabilities).
type ElicitationCapabilities struct {
	Form map[string]any `json:"form,omitzero"`
	URL  map[string]any `json:"url,omitzero"`
}

// SamplingCapabilities declares sampling support; Context and Tools declare
// the includeContext and tools parameters.
type SamplingCapabilities struct {
	Context map[string]any `json:"context,omitzero"`
	Tools   map[string]any `json:"tools,omitzero"`
}

// RootsCapabilities declares roots support.
type RootsCapabilities struct {
	// ListChanged is legacy only.
	ListChanged bool `json:"listChanged,omitempty"`
}

// SupportsFormElicitation reports whether c declares form-mode elicitation.
func (c *ClientCapabilities) SupportsFormElicitation() bool {
	if c == nil || c.Elicitation == nil {
		return false
	}
	e := c.Elicitation
	return e.Form != nil || e.URL == nil
}

// SupportsURLElicitation reports whether c declares URL-mode elicitation.
func (c *ClientCapabilities) SupportsURLElicitation() bool {
	return c != nil && c.Elicitation != nil && c.Elicitation.URL != nil
}

// SupportsSampling reports whether c declares sampling.
func (c *ClientCapabilities) SupportsSampling() bool { return c != nil && c.Sampling != nil }

// SupportsRoots reports whether c declares roots.
func (c *ClientCapabilities) SupportsRoots() bool { return c != nil && c.Roots != nil }

// ServerCapabilities are what a server advertises: in the server/discover
// result (2026-07-28) or the initialize result (legacy). A nil field means
// "not offered".
type ServerCapabilities struct {
	Tools        *ToolCapabilities         `json:"tools,omitzero"`
	Resources    *ResourceCapabilities     `json:"resources,omitempty"`
	Prompts      *PromptCapabilities       `json:"prompts,omitempty"`
	Completions  *struct{}                 `json:"completions,omitempty"`
	Logging      *struct{}                 `json:"logging,omitempty"`
	Experimental map[string]map[string]any `json:"experimental,omitempty"`
	Extensions   map[string]map[string]any `json:"extensions,omitempty"`
}

// ToolCapabilities is the tools entry of ServerCapabilities.
type ToolCapabilities struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// ResourceCapabilities is the resources entry of ServerCapabilities.
type ResourceCapabilities struct {
	Subscribe   bool `json:"subscribe,omitempty"`
	ListChanged bool `json:"listChanged,omitempty"`
}

// PromptCapabilities is the prompts entry of ServerCapabilities.
type PromptCapabilities struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// CacheScope says who may share a cached result (2026-07-28
// server/utilities/caching).
type CacheScope string

// Cache scopes.
const (
	// CacheScopePrivate: reusable only within the same authorization context.
	CacheScopePrivate CacheScope = "private"
	// CacheScopePublic: holds no user-specific data; any cache may share it.
	CacheScopePublic CacheScope = "public"
)

// LoggingLevel is a syslog severity (RFC 5424 §6.2.1) used by
// notifications/message, logging/setLevel and the MetaLogLevel key.
type LoggingLevel string

// Logging levels, lowest first.
const (
	LevelDebug     LoggingLevel = "debug"
	LevelInfo      LoggingLevel = "info"
	LevelNotice    LoggingLevel = "notice"
	LevelWarning   LoggingLevel = "warning"
	LevelError     LoggingLevel = "error"
	LevelCritical  LoggingLevel = "critical"
	LevelAlert     LoggingLevel = "alert"
	LevelEmergency LoggingLevel = "emergency"
)

// ToolAnnotations are hints about a tool's behaviour. Clients treat them as
// untrusted unless the server is (2026-07-28 server/tools §Tool).
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Tool is a tool definition, as tools/list lists it (2026-07-28
// server/tools §Tool). It holds wire fields only: how a server treats the
// tool (its structured output policy, the client capabilities its calls
// need) is given at registration (core.ToolOptions).
type Tool struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Icons       []Icon           `json:"icons,omitempty"`
	Annotations *ToolAnnotations `json:"annotations,omitempty"`
	Meta        Meta             `json:"_meta,omitempty"`
	// InputSchema is the JSON Schema of the arguments; its root must be an
	// object schema. Sending, it may be any value that marshals to a JSON
	// Schema (json.RawMessage, a map, a *jsonschema.Schema). Registered with
	// core.AddTool, a non-nil InputSchema replaces the schema derived from
	// the argument type and is listed verbatim. A decoded Tool holds the
	// schema as received, a json.RawMessage, so that no keyword, key order
	// or number is lost.
	InputSchema any `json:"inputSchema"`
	// OutputSchema is the JSON Schema of structuredContent, or nil. It is
	// given and decoded as InputSchema is. Registered with core.AddTool, a
	// non-nil OutputSchema replaces the schema derived from the result type,
	// and gives one to a result type that has none (an interface type such
	// as any): the handler's results must then conform to it. Legacy
	// revisions list only object roots (2025-06-18 server/tools §Output
	// Schema).
	OutputSchema any `json:"outputSchema,omitempty"`
}

// UnmarshalJSON decodes a tool definition, keeping inputSchema and
// outputSchema as json.RawMessage, byte for byte.
func (t *Tool) UnmarshalJSON(data []byte) error {
	if ok, err := t.decodeFast(data); ok {
		return err
	}
	return t.decodeSlow(data)
}

// toolMembers are the members decodeFast reads, in the order of its cases.
var toolMembers = [...]string{"name", "title", "description", "icons", "annotations", "_meta", "inputSchema", "outputSchema"}

// decodeFast is decodeSlow without reflection for the members a tool
// usually has (its strings and schemas; icons, annotations and _meta are
// decoded alone, by the same rules); it reports false, having changed
// nothing, when jsonwire.EachKnownMember or a string member needs
// encoding/json's rules. A client decodes every tool it lists.
func (t *Tool) decodeFast(data []byte) (bool, error) {
	if !json.Valid(data) {
		return false, nil
	}
	var res Tool
	var err error
	ok := jsonwire.EachKnownMember(data, toolMembers[:], false, func(i int, v []byte) bool {
		switch i {
		case 0, 1, 2:
			if jsonwire.IsNull(v) {
				return true // encoding/json leaves a string as it is
			}
			s, ok := jsonwire.RawString(v)
			if !ok || !utf8.ValidString(s) {
				return false
			}
			*[...]*string{&res.Name, &res.Title, &res.Description}[i] = s
		case 3:
			err = json.Unmarshal(v, &res.Icons)
		case 4:
			err = json.Unmarshal(v, &res.Annotations)
		case 5:
			err = res.Meta.UnmarshalJSON(v)
		case 6:
			res.InputSchema = json.RawMessage(bytes.Clone(v))
		case 7:
			res.OutputSchema = json.RawMessage(bytes.Clone(v))
		}
		return err == nil
	})
	if !ok {
		return false, nil
	}
	*t = res
	return true, nil
}

// decodeSlow is UnmarshalJSON by encoding/json's rules.
func (t *Tool) decodeSlow(data []byte) error {
	type wire Tool
	var w struct {
		wire
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*t = Tool(w.wire)
	t.InputSchema, t.OutputSchema = nil, nil
	if w.InputSchema != nil {
		t.InputSchema = w.InputSchema
	}
	if w.OutputSchema != nil {
		t.OutputSchema = w.OutputSchema
	}
	return nil
}

// CallToolResult is the complete result of tools/call. A tool's own failure
// is a result with IsError set, which the model can act on; a protocol
// failure is an *Error (2026-07-28 server/tools §Error Handling).
type CallToolResult struct {
	Content []Content `json:"content"`
	// StructuredContent is any JSON value conforming to the tool's output
	// schema. It is sent only when non-nil; use json.RawMessage("null") to
	// send an explicit null. A decoded result holds it as received, a
	// json.RawMessage (nil when absent).
	StructuredContent any  `json:"structuredContent,omitempty"`
	IsError           bool `json:"isError,omitempty"`
	Meta              Meta `json:"_meta,omitempty"`
}

// UnmarshalJSON decodes a tools/call result. Content keeps the blocks
// UnmarshalContent models, in order, and leaves out the others (a block
// type of a later revision); structuredContent stays raw.
func (r *CallToolResult) UnmarshalJSON(data []byte) error {
	if ok, err := r.decodeFast(data); ok {
		return err
	}
	return r.decodeSlow(data)
}

// decodeSlow is UnmarshalJSON by encoding/json's rules.
func (r *CallToolResult) decodeSlow(data []byte) error {
	var w struct {
		Content           []json.RawMessage `json:"content"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
		IsError           bool              `json:"isError"`
		Meta              Meta              `json:"_meta"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*r = CallToolResult{IsError: w.IsError, Meta: w.Meta}
	if w.StructuredContent != nil {
		r.StructuredContent = w.StructuredContent
	}
	if w.Content != nil {
		r.Content = make([]Content, 0, len(w.Content))
	}
	for _, cb := range w.Content {
		if c, err := UnmarshalContent(cb); err == nil {
			r.Content = append(r.Content, c)
		}
	}
	return nil
}

// callToolResultMembers are the members decodeFast reads, in the order of
// its cases.
var callToolResultMembers = [...]string{"content", "structuredContent", "isError", "_meta"}

// decodeFast is decodeSlow for the common shape of a result, without
// reflection: it reports false, having changed nothing, for anything
// decodeSlow might read differently (see jsonwire.EachKnownMember), which decodeSlow
// then decodes. A client decodes every tools/call result it gets.
func (r *CallToolResult) decodeFast(data []byte) (bool, error) {
	if !json.Valid(data) {
		return false, nil
	}
	var content, structured, meta []byte
	isError := false
	ok := jsonwire.EachKnownMember(data, callToolResultMembers[:], false, func(i int, v []byte) bool {
		switch i {
		case 0:
			content = v
			return v[0] == '[' || jsonwire.IsNull(v)
		case 1:
			structured = v
		case 2:
			switch string(v) {
			case "true":
				isError = true
			case "false", "null":
			default:
				return false
			}
		case 3:
			meta = v
			return v[0] == '{' || jsonwire.IsNull(v)
		}
		return true
	})
	if !ok {
		return false, nil
	}
	res := CallToolResult{IsError: isError}
	if content != nil && content[0] == '[' {
		res.Content = make([]Content, 0, 1)
		jsonwire.EachElement(content, func(v []byte) {
			if c, err := UnmarshalContent(v); err == nil {
				res.Content = append(res.Content, c)
			}
		})
	}
	if structured != nil {
		res.StructuredContent = json.RawMessage(bytes.Clone(structured))
	}
	if meta != nil && meta[0] == '{' {
		m, err := decodeMeta(meta)
		if err != nil {
			return true, err
		}
		res.Meta = m
	}
	*r = res
	return true, nil
}

// Resource is a resource the server can read, as listed by resources/list.
type Resource struct {
	URI         string       `json:"uri"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Size        *int64       `json:"size,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ResourceTemplate describes a family of resources by an RFC 6570 URI
// template, as listed by resources/templates/list.
type ResourceTemplate struct {
	URITemplate string       `json:"uriTemplate"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ResourceContents is the text or binary content of a resource (schema
// TextResourceContents and BlobResourceContents). Exactly one of Text and
// Blob is sent: Blob (base64) when it is non-nil, Text otherwise. A decoded
// value has a non-nil Blob exactly when the JSON had a blob member.
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"-"`
	Blob     []byte `json:"-"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (c ResourceContents) MarshalJSON() ([]byte, error) {
	type base struct {
		URI      string  `json:"uri"`
		MIMEType string  `json:"mimeType,omitempty"`
		Text     *string `json:"text,omitempty"`
		Blob     []byte  `json:"blob,omitempty"`
		Meta     Meta    `json:"_meta,omitempty"`
	}
	b := base{URI: c.URI, MIMEType: c.MIMEType, Meta: c.Meta}
	if c.Blob != nil {
		b.Blob = c.Blob
		if len(c.Blob) == 0 {
			return json.Marshal(struct {
				base
				Blob string `json:"blob"`
			}{base: b})
		}
	} else {
		b.Text = &c.Text
	}
	return json.Marshal(b)
}

// UnmarshalJSON implements json.Unmarshaler.
func (c *ResourceContents) UnmarshalJSON(data []byte) error {
	var w struct {
		URI      string  `json:"uri"`
		MIMEType string  `json:"mimeType"`
		Text     *string `json:"text"`
		Blob     *[]byte `json:"blob"`
		Meta     Meta    `json:"_meta"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*c = ResourceContents{URI: w.URI, MIMEType: w.MIMEType, Meta: w.Meta}
	if w.Blob != nil {
		c.Blob = *w.Blob
		if c.Blob == nil {
			c.Blob = []byte{}
		}
	} else if w.Text != nil {
		c.Text = *w.Text
	}
	return nil
}

// ReadResourceResult is the complete result of resources/read.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
	Meta     Meta               `json:"_meta,omitempty"`
}

// Prompt is a prompt template as listed by prompts/list.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Icons       []Icon           `json:"icons,omitempty"`
	Meta        Meta             `json:"_meta,omitempty"`
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	Role    Role    `json:"role"`
	Content Content `json:"content"`
}

// UnmarshalJSON implements json.Unmarshaler; a content block
// UnmarshalContent does not model is an error.
func (m *PromptMessage) UnmarshalJSON(data []byte) error {
	var w struct {
		Role    Role            `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	c, err := UnmarshalContent(w.Content)
	if err != nil {
		return err
	}
	m.Role, m.Content = w.Role, c
	return nil
}

// GetPromptResult is the complete result of prompts/get.
type GetPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
	Meta        Meta            `json:"_meta,omitempty"`
}

// CompletionReference is the ref of a completion/complete request: a prompt
// (Type "ref/prompt", Name) or a resource template (Type "ref/resource",
// URI).
type CompletionReference struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// CompleteParams are the params of completion/complete.
type CompleteParams struct {
	Ref      CompletionReference `json:"ref"`
	Argument struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"argument"`
	Context *struct {
		Arguments map[string]string `json:"arguments,omitempty"`
	} `json:"context,omitzero"`
}

// Completion is the completion entry of a CompleteResult.
type Completion struct {
	// Values holds at most 100 suggestions; a server cuts longer lists and
	// sets HasMore.
	Values  []string `json:"values"`
	Total   *int     `json:"total,omitempty"`
	HasMore bool     `json:"hasMore,omitempty"`
}

// CompleteResult is the result of completion/complete.
type CompleteResult struct {
	Completion Completion `json:"completion"`
	Meta       Meta       `json:"_meta,omitempty"`
}

// Root is a root the client exposes (roots/list).
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
	Meta Meta   `json:"_meta,omitempty"`
}

// ListRootsResult is the client's answer to roots/list.
type ListRootsResult struct {
	Roots []Root `json:"roots"`
	Meta  Meta   `json:"_meta,omitempty"`
}

// The list results follow one cursor convention (2026-07-28
// server/utilities/pagination): NextCursor is nil on the last page, and
// any other value, "" included, is the opaque cursor of the next page. In
// 2026-07-28 they are cacheable (server/utilities/caching): TTLMs and
// CacheScope are their cache hint, nil and "" when the result has none.

// ListToolsResult is one page of tools/list.
type ListToolsResult struct {
	Tools      []*Tool    `json:"tools"`
	NextCursor *string    `json:"nextCursor,omitempty"`
	TTLMs      *int64     `json:"ttlMs,omitempty"`
	CacheScope CacheScope `json:"cacheScope,omitempty"`
	Meta       Meta       `json:"_meta,omitempty"`
}

// ListPromptsResult is one page of prompts/list.
type ListPromptsResult struct {
	Prompts    []Prompt   `json:"prompts"`
	NextCursor *string    `json:"nextCursor,omitempty"`
	TTLMs      *int64     `json:"ttlMs,omitempty"`
	CacheScope CacheScope `json:"cacheScope,omitempty"`
	Meta       Meta       `json:"_meta,omitempty"`
}

// ListResourcesResult is one page of resources/list.
type ListResourcesResult struct {
	Resources  []Resource `json:"resources"`
	NextCursor *string    `json:"nextCursor,omitempty"`
	TTLMs      *int64     `json:"ttlMs,omitempty"`
	CacheScope CacheScope `json:"cacheScope,omitempty"`
	Meta       Meta       `json:"_meta,omitempty"`
}

// ListResourceTemplatesResult is one page of resources/templates/list.
type ListResourceTemplatesResult struct {
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
	NextCursor        *string            `json:"nextCursor,omitempty"`
	TTLMs             *int64             `json:"ttlMs,omitempty"`
	CacheScope        CacheScope         `json:"cacheScope,omitempty"`
	Meta              Meta               `json:"_meta,omitempty"`
}

// DiscoverResult is the result of server/discover (2026-07-28
// server/discover): the revisions the server serves, newest first, what
// it offers, and its cache hint. The server names itself in
// Meta[MetaServerInfo].
type DiscoverResult struct {
	SupportedVersions []string           `json:"supportedVersions"`
	Capabilities      ServerCapabilities `json:"capabilities"`
	Instructions      string             `json:"instructions,omitempty"`
	TTLMs             *int64             `json:"ttlMs,omitempty"`
	CacheScope        CacheScope         `json:"cacheScope,omitempty"`
	Meta              Meta               `json:"_meta,omitempty"`
}

// InitializeResult is the result of the legacy initialize (2025-11-25
// basic/lifecycle §Initialization): the revision the server chose, what it
// offers, and who it is.
type InitializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
	Meta            Meta               `json:"_meta,omitempty"`
}

// SubscriptionFilter is the set of change notifications a
// subscriptions/listen request opts in to, and that the server's
// notifications/subscriptions/acknowledged confirms (2026-07-28
// basic/patterns/subscriptions).
type SubscriptionFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	// TaskIDs are the tasks whose notifications/tasks the client listens
	// to (Tasks extension, tasks.md §Task Status Notifications); only a
	// request that declares ExtensionTasks may ask for them.
	TaskIDs []string `json:"taskIds,omitempty"`
}
