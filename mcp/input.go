package mcp

import (
	"encoding/json"
)

// InputRequest is one request for input inside an input_required result
// (2026-07-28 basic/patterns/mrtr): an elicitation, a sampling request or a
// roots listing; in legacy revisions the same method and params travel as a
// request of the server's own. Method is MethodElicit, MethodCreateMessage
// or MethodListRoots.
type InputRequest struct {
	Method string `json:"method"`
	// Params are the request's params. Sending, any value that marshals to
	// a JSON object (*ElicitFormParams, *ElicitURLParams,
	// *CreateMessageParams, a map); a decoded InputRequest holds them as
	// received, a json.RawMessage (nil when absent).
	Params any `json:"params,omitempty"`
}

// UnmarshalJSON decodes an input request, keeping its params raw.
func (r *InputRequest) UnmarshalJSON(data []byte) error {
	var w struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*r = InputRequest{Method: w.Method}
	if w.Params != nil {
		r.Params = w.Params
	}
	return nil
}

// InputRequests maps server-chosen keys to input requests (the
// inputRequests member of an input_required result); the client answers
// each under the same key in inputResponses.
type InputRequests map[string]*InputRequest

// ElicitFormParams are the params of a form-mode elicitation (2025-11-25
// and 2026-07-28 client/elicitation §Form Mode). RequestedSchema is a flat
// object schema of primitive properties.
type ElicitFormParams struct {
	Mode            string          `json:"mode,omitempty"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
}

// ElicitURLParams are the params of a URL-mode elicitation (2025-11-25 and
// 2026-07-28 client/elicitation §URL Mode): the client shows the user an
// absolute URL to open, and never opens it itself.
type ElicitURLParams struct {
	Mode    string `json:"mode"`
	Message string `json:"message"`
	URL     string `json:"url"`
	// ElicitationID is required by legacy 2025-11-25 clients; core's legacy
	// bridge fills it.
	ElicitationID string `json:"elicitationId,omitempty"`
}

// ModelHint names a model family for sampling.
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// ModelPreferences guide the client's model choice for sampling; each
// priority is between 0 and 1.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitempty"`
	SpeedPriority        *float64    `json:"speedPriority,omitempty"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitempty"`
}

// SamplingMessage is one message of a sampling request.
type SamplingMessage struct {
	Role    Role    `json:"role"`
	Content Content `json:"content"`
}

// UnmarshalJSON implements json.Unmarshaler; a content block
// UnmarshalContent does not model (tool_use, tool_result) is an error.
func (m *SamplingMessage) UnmarshalJSON(data []byte) error {
	var pm PromptMessage
	if err := pm.UnmarshalJSON(data); err != nil {
		return err
	}
	m.Role, m.Content = pm.Role, pm.Content
	return nil
}

// CreateMessageParams are the params of sampling/createMessage (2025-11-25
// client/sampling).
type CreateMessageParams struct {
	Messages         []SamplingMessage `json:"messages"`
	MaxTokens        int               `json:"maxTokens"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	IncludeContext   string            `json:"includeContext,omitempty"`
	Temperature      *float64          `json:"temperature,omitempty"`
	StopSequences    []string          `json:"stopSequences,omitempty"`
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	Metadata         map[string]any    `json:"metadata,omitempty"`
	// Tools and ToolChoice need the client's sampling.tools capability.
	Tools      []*Tool         `json:"tools,omitempty"`
	ToolChoice json.RawMessage `json:"toolChoice,omitempty"`
}

// The actions of an elicitation answer (ElicitResult.Action; 2025-06-18
// and 2026-07-28 client/elicitation): the user submitted the form (or
// agreed to open the URL), explicitly said no, or dismissed the request
// without choosing.
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// ElicitResult is the client's answer to an elicitation.
type ElicitResult struct {
	// Action is ActionAccept, ActionDecline or ActionCancel.
	Action string `json:"action"`
	// Content holds the form's values when Action is ActionAccept in form
	// mode; it is absent otherwise.
	Content map[string]any `json:"content,omitempty"`
	Meta    Meta           `json:"_meta,omitempty"`
}

// CreateMessageResult is the client's answer to a sampling request.
// Content is a content block, raw (sampling answers may hold block types,
// tool_use, that Content does not model).
type CreateMessageResult struct {
	Role       Role            `json:"role"`
	Content    json.RawMessage `json:"content"`
	Model      string          `json:"model"`
	StopReason string          `json:"stopReason,omitempty"`
	Meta       Meta            `json:"_meta,omitempty"`
}

// Text returns the text of a single text content block, or "".
func (r *CreateMessageResult) Text() string {
	c, err := UnmarshalContent(r.Content)
	if err != nil {
		return ""
	}
	if t, ok := c.(*TextContent); ok {
		return t.Text
	}
	return ""
}
