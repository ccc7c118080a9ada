package mcp

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// Content is a content block of a tool result, prompt message or sampling
// message (2026-07-28 schema ContentBlock): *TextContent, *ImageContent,
// *AudioContent, *ResourceLink or *EmbeddedResource. The interface is
// sealed: only this package's block types implement it.
type Content interface {
	json.Marshaler
	contentType() string
}

// TextContent is a text block.
type TextContent struct {
	Text        string
	Annotations *Annotations
	Meta        Meta
}

// ImageContent is a base64 image block. Data holds the raw bytes.
type ImageContent struct {
	Data        []byte
	MIMEType    string
	Annotations *Annotations
	Meta        Meta
}

// AudioContent is a base64 audio block. Data holds the raw bytes.
type AudioContent struct {
	Data        []byte
	MIMEType    string
	Annotations *Annotations
	Meta        Meta
}

// ResourceLink is a link to a resource the client may read.
type ResourceLink struct {
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string
	Size        *int64
	Icons       []Icon
	Annotations *Annotations
	Meta        Meta
}

// EmbeddedResource is a resource's contents inlined in a content block.
type EmbeddedResource struct {
	Resource    ResourceContents
	Annotations *Annotations
	Meta        Meta
}

func (*TextContent) contentType() string      { return "text" }
func (*ImageContent) contentType() string     { return "image" }
func (*AudioContent) contentType() string     { return "audio" }
func (*ResourceLink) contentType() string     { return "resource_link" }
func (*EmbeddedResource) contentType() string { return "resource" }

// MarshalJSON implements json.Marshaler.
func (c *TextContent) MarshalJSON() ([]byte, error) {
	if c.Annotations == nil && c.Meta == nil {
		// Hot path: one text block per tool result.
		b := make([]byte, 0, len(c.Text)+32)
		b = append(b, `{"type":"text","text":`...)
		b = jsonwire.AppendString(b, c.Text)
		return append(b, '}'), nil
	}
	return json.Marshal(struct {
		Type        string       `json:"type"`
		Text        string       `json:"text"`
		Annotations *Annotations `json:"annotations,omitempty"`
		Meta        Meta         `json:"_meta,omitempty"`
	}{"text", c.Text, c.Annotations, c.Meta})
}

type mediaWire struct {
	Type        string       `json:"type"`
	Data        []byte       `json:"data"`
	MIMEType    string       `json:"mimeType"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (c *ImageContent) MarshalJSON() ([]byte, error) {
	return json.Marshal(mediaWire{"image", nonNilBytes(c.Data), c.MIMEType, c.Annotations, c.Meta})
}

// MarshalJSON implements json.Marshaler.
func (c *AudioContent) MarshalJSON() ([]byte, error) {
	return json.Marshal(mediaWire{"audio", nonNilBytes(c.Data), c.MIMEType, c.Annotations, c.Meta})
}

func nonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// MarshalJSON implements json.Marshaler.
func (c *ResourceLink) MarshalJSON() ([]byte, error) {
	// A resource_link block carries the members of a Resource (the fields
	// are the same).
	return json.Marshal(struct {
		Type string `json:"type"`
		Resource
	}{"resource_link", Resource(*c)})
}

// MarshalJSON implements json.Marshaler.
func (c *EmbeddedResource) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type        string           `json:"type"`
		Resource    ResourceContents `json:"resource"`
		Annotations *Annotations     `json:"annotations,omitempty"`
		Meta        Meta             `json:"_meta,omitempty"`
	}{"resource", c.Resource, c.Annotations, c.Meta})
}

// UnmarshalContent decodes one content block by its type member. Block
// types this package does not model (tool_use and tool_result of sampling,
// types of later revisions) are an error.
func UnmarshalContent(data []byte) (Content, error) {
	if c, ok := textFast(data); ok {
		return c, nil
	}
	return unmarshalContentSlow(data)
}

// textBlockMembers are the members of a plain text block.
var textBlockMembers = [...]string{"type", "text"}

// textFast decodes a plain text block ({"type":"text","text":...}, the one
// block of most tool results) without reflection. It reports false for
// anything else, which unmarshalContentSlow decodes.
func textFast(data []byte) (Content, bool) {
	if !json.Valid(data) {
		return nil, false
	}
	var typ, text []byte
	if !jsonwire.EachKnownMember(data, textBlockMembers[:], true, func(i int, v []byte) bool {
		if i == 0 {
			typ = v
		} else {
			text = v
		}
		return true
	}) || typ == nil || string(typ) != `"text"` || text == nil {
		return nil, false
	}
	s, ok := jsonwire.RawString(text)
	if !ok || !utf8.ValidString(s) {
		return nil, false // not a string, or invalid UTF-8 (encoding/json replaces it)
	}
	return &TextContent{Text: s}, true
}

// unmarshalContentSlow is UnmarshalContent by encoding/json's rules.
func unmarshalContentSlow(data []byte) (Content, error) {
	var w struct {
		Type        string            `json:"type"`
		Text        string            `json:"text"`
		Data        []byte            `json:"data"`
		MIMEType    string            `json:"mimeType"`
		URI         string            `json:"uri"`
		Name        string            `json:"name"`
		Title       string            `json:"title"`
		Description string            `json:"description"`
		Size        *int64            `json:"size"`
		Icons       []Icon            `json:"icons"`
		Resource    *ResourceContents `json:"resource"`
		Annotations *Annotations      `json:"annotations"`
		Meta        Meta              `json:"_meta"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, err
	}
	switch w.Type {
	case "text":
		return &TextContent{Text: w.Text, Annotations: w.Annotations, Meta: w.Meta}, nil
	case "image":
		return &ImageContent{Data: w.Data, MIMEType: w.MIMEType, Annotations: w.Annotations, Meta: w.Meta}, nil
	case "audio":
		return &AudioContent{Data: w.Data, MIMEType: w.MIMEType, Annotations: w.Annotations, Meta: w.Meta}, nil
	case "resource_link":
		return &ResourceLink{URI: w.URI, Name: w.Name, Title: w.Title, Description: w.Description,
			MIMEType: w.MIMEType, Size: w.Size, Icons: w.Icons, Annotations: w.Annotations, Meta: w.Meta}, nil
	case "resource":
		if w.Resource == nil {
			return nil, fmt.Errorf("resource content without resource")
		}
		return &EmbeddedResource{Resource: *w.Resource, Annotations: w.Annotations, Meta: w.Meta}, nil
	}
	return nil, fmt.Errorf("unsupported content type %q", w.Type)
}
