package core

import (
	"encoding/json"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// Implementation names and versions an MCP client or server.
type Implementation struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
	WebsiteURL  string `json:"websiteUrl,omitempty"`
}

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

// Icon is an image a client may show for a tool, prompt, resource or server.
type Icon struct {
	Src      string   `json:"src"`
	MIMEType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	// Theme is "light" or "dark", or empty.
	Theme string `json:"theme,omitempty"`
}

// Meta is a free-form _meta object.
type Meta map[string]any

// Role is the sender of a prompt or sampling message: "user" or "assistant".
type Role string

// Roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Annotations are hints to the client about a content block or resource.
type Annotations struct {
	Audience     []Role   `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
}

// ClientCapabilities are what a client declares it can do. In 2026-07-28 they
// travel in every request's _meta; in legacy revisions, once in initialize.
// A nil field means "not declared".
type ClientCapabilities struct {
	Elicitation  *ElicitationCapabilities  `json:"elicitation,omitempty"`
	Sampling     *SamplingCapabilities     `json:"sampling,omitempty"`
	Roots        *RootsCapabilities        `json:"roots,omitempty"`
	Experimental map[string]map[string]any `json:"experimental,omitempty"`
	Extensions   map[string]map[string]any `json:"extensions,omitempty"`
}

// ElicitationCapabilities declares the elicitation modes a client supports. An
// empty value (neither Form nor URL) means form mode only.
type ElicitationCapabilities struct {
	Form map[string]any `json:"form,omitzero"`
	URL  map[string]any `json:"url,omitzero"`
}

// SamplingCapabilities declares sampling support.
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

// missing returns the part of want that c lacks, or nil when c has it all.
func (c *ClientCapabilities) missing(want *ClientCapabilities) *ClientCapabilities {
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

// ServerCapabilities are what the server advertises.
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

// CacheScope says who may share a cached result.
type CacheScope string

// Cache scopes.
const (
	// CacheScopePrivate: reusable only within the same authorization context.
	CacheScopePrivate CacheScope = "private"
	// CacheScopePublic: holds no user-specific data; any cache may share it.
	CacheScopePublic CacheScope = "public"
)

// LoggingLevel is a syslog severity used by notifications/message.
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

// rank returns the severity of l (0 = debug) or -1 for an unknown level.
func (l LoggingLevel) rank() int {
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

// ToolAnnotations are untrusted hints about a tool's behaviour.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// CallToolResult is the complete result of tools/call.
type CallToolResult struct {
	Content []Content `json:"content"`
	// StructuredContent is any JSON value conforming to the tool's output
	// schema. It is sent only when non-nil; use json.RawMessage("null") to send
	// an explicit null.
	StructuredContent any  `json:"structuredContent,omitempty"`
	IsError           bool `json:"isError,omitempty"`
	Meta              Meta `json:"_meta,omitempty"`
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

// ResourceTemplate describes a family of resources by an RFC 6570 URI template.
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

// ResourceContents is the text or binary content of a resource. Exactly one of
// Text and Blob is sent: Blob when it is non-nil, Text otherwise.
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

// UnmarshalJSON implements json.Unmarshaler.
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
// (Type "ref/prompt", Name) or a resource template (Type "ref/resource", URI).
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
	// Values holds at most 100 suggestions; longer lists are cut and HasMore set.
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

// clone returns a deep copy of c (an empty value for nil), so that a handler
// can change what it was given without changing what the server caches.
func (c *ClientCapabilities) clone() *ClientCapabilities {
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
