package core

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/mcpfn/mcpfn/core/internal/jsonwire"
	schemas "github.com/mcpfn/mcpfn/core/internal/schema"
)

// Methods of input requests.
const (
	MethodElicit        = "elicitation/create"
	MethodCreateMessage = "sampling/createMessage"
	MethodListRoots     = "roots/list"
)

// InputRequest is one request for input inside an input_required result: an
// elicitation, a sampling request or a roots listing. Build it with
// ElicitForm, ElicitURL, a Form, Sample or ListRoots.
type InputRequest struct {
	Method string `json:"method"`
	Params any    `json:"params,omitempty"`
}

// InputRequests maps server-chosen keys to input requests.
type InputRequests map[string]*InputRequest

// InputRequiredError is what a handler returns (as its error) to ask the
// client for input instead of answering: the client answers every request
// and retries the call, and the handler runs again from the top with the
// answers in Request.Input. State, if not empty, comes back on the retry
// through Input.State; the server seals it (HMAC-SHA256), so it cannot be
// forged, but the client can read it and replay it until it expires: keep
// secrets out of it.
type InputRequiredError struct {
	Requests InputRequests
	State    string
}

func (e *InputRequiredError) Error() string {
	keys := make([]string, 0, len(e.Requests))
	for k := range e.Requests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return "input required: " + strings.Join(keys, ", ")
}

// InputRequired returns the error a handler returns to ask for input. state
// is optional; requests may be empty when state is set (e.g. to ask the
// client to retry later).
func InputRequired(requests InputRequests, state string) error {
	return &InputRequiredError{Requests: requests, State: state}
}

// ElicitFormParams are the params of a form-mode elicitation.
type ElicitFormParams struct {
	Mode            string          `json:"mode,omitempty"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
}

// ElicitURLParams are the params of a URL-mode elicitation.
type ElicitURLParams struct {
	Mode    string `json:"mode"`
	Message string `json:"message"`
	URL     string `json:"url"`
	// ElicitationID is required by legacy 2025-11-25 clients; the legacy
	// bridge fills it.
	ElicitationID string `json:"elicitationId,omitempty"`
}

// ElicitForm asks the user to fill in a form. schema is a flat object schema
// of string, number, integer, boolean and enum properties, given as any JSON
// value (json.RawMessage, map). It is checked before it is sent.
func ElicitForm(message string, schema any) *InputRequest {
	raw, err := schemas.Normalize(schema)
	if err != nil {
		raw = json.RawMessage(`null`)
	}
	return &InputRequest{Method: MethodElicit, Params: &ElicitFormParams{Mode: "form", Message: message, RequestedSchema: raw}}
}

// ElicitURL asks the user to open an absolute URL (URL-mode elicitation).
func ElicitURL(message, rawURL string) *InputRequest {
	return &InputRequest{Method: MethodElicit, Params: &ElicitURLParams{Mode: "url", Message: message, URL: rawURL}}
}

// ModelHint names a model family for sampling.
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// ModelPreferences guide the client's model choice for sampling.
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

// CreateMessageParams are the params of sampling/createMessage.
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

// Sample asks the client's model for a completion.
func Sample(p *CreateMessageParams) *InputRequest {
	return &InputRequest{Method: MethodCreateMessage, Params: p}
}

// SampleText is Sample with one user text message.
func SampleText(prompt string, maxTokens int) *InputRequest {
	return Sample(&CreateMessageParams{
		Messages:  []SamplingMessage{{Role: RoleUser, Content: &TextContent{Text: prompt}}},
		MaxTokens: maxTokens,
	})
}

// ListRoots asks the client for its roots.
func ListRoots() *InputRequest {
	return &InputRequest{Method: MethodListRoots, Params: struct{}{}}
}

// ElicitResult is the client's answer to an elicitation.
type ElicitResult struct {
	// Action is "accept", "decline" or "cancel".
	Action string `json:"action"`
	// Content holds the form's values when Action is "accept" (form mode).
	Content map[string]any `json:"content,omitempty"`
	Meta    Meta           `json:"_meta,omitempty"`
}

// CreateMessageResult is the client's answer to a sampling request.
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

// InputResponses is the read-only view of a retried request's answers. Only
// answers to keys asked in the previous round are visible; extra keys are
// ignored.
type InputResponses struct {
	raw   map[string]json.RawMessage
	state string
	round int // input_required results of the call before this round
}

var emptyInput = &InputResponses{}

// State returns the state the handler returned in the previous round, as it
// returned it (verified), or "".
func (in *InputResponses) State() string { return in.state }

// Len returns the number of answers.
func (in *InputResponses) Len() int { return len(in.raw) }

// Raw returns the raw answer for key.
func (in *InputResponses) Raw(key string) (json.RawMessage, bool) {
	v, ok := in.raw[key]
	return v, ok && !jsonwire.IsNull(v)
}

// Elicitation returns the elicitation answer for key, including declined and
// cancelled ones (check Action).
func (in *InputResponses) Elicitation(key string) (*ElicitResult, bool) {
	raw, ok := in.Raw(key)
	if !ok || !jsonwire.IsObject(raw) {
		return nil, false
	}
	var r ElicitResult
	if json.Unmarshal(raw, &r) != nil {
		return nil, false
	}
	switch r.Action {
	case "accept", "decline", "cancel":
		return &r, true
	}
	return nil, false
}

// Sampling returns the sampling answer for key.
func (in *InputResponses) Sampling(key string) (*CreateMessageResult, bool) {
	raw, ok := in.Raw(key)
	if !ok || !jsonwire.IsObject(raw) {
		return nil, false
	}
	var r CreateMessageResult
	if json.Unmarshal(raw, &r) != nil || r.Content == nil {
		return nil, false
	}
	return &r, true
}

// Roots returns the roots answer for key.
func (in *InputResponses) Roots(key string) (*ListRootsResult, bool) {
	raw, ok := in.Raw(key)
	if !ok || !jsonwire.IsObject(raw) {
		return nil, false
	}
	var r ListRootsResult
	if json.Unmarshal(raw, &r) != nil || r.Roots == nil {
		return nil, false
	}
	return &r, true
}

// Accepted decodes the content of an accepted elicitation answer into T. It
// reports false when the key was not answered, was declined or cancelled, or
// its content does not convert to T: the handler should then ask again.
func Accepted[T any](in *InputResponses, key string) (T, bool) {
	var zero T
	raw, ok := in.Raw(key)
	if !ok || !jsonwire.IsObject(raw) {
		return zero, false
	}
	var action string
	var content []byte
	jsonwire.EachMember(raw, func(k, v []byte) bool {
		switch {
		case jsonwire.KeyIs(k, "action"):
			action, _ = jsonwire.RawString(v)
		case jsonwire.KeyIs(k, "content"):
			content = v
		}
		return true
	})
	if action != "accept" || !jsonwire.IsObject(content) {
		return zero, false
	}
	var v T
	if err := jsonwire.Bind(content, &v); err != nil { // as validated: case-sensitive names
		return zero, false
	}
	return v, true
}

// mrtrCall carries what the multi round-trip machinery needs about a call.
type mrtrCall struct {
	binding   stateBinding
	responses map[string]json.RawMessage
	token     string
	hasToken  bool
}

// setInput gives r its Input, unless it has one already (a legacy call the
// bridge runs again with the client's answers).
func (s *Server) setInput(ctx context.Context, r *Request, c mrtrCall) error {
	if r.Input != nil {
		return nil
	}
	in, err := s.openInput(ctx, c)
	if err != nil {
		return err
	}
	r.Input = in
	return nil
}

// openInput verifies a retried call's requestState and builds its Input view.
func (s *Server) openInput(ctx context.Context, c mrtrCall) (*InputResponses, error) {
	if !c.hasToken {
		// A first round. Every input_required result carries a sealed
		// state naming the keys it asked, so answers without one answer
		// nothing the server asked: they are ignored.
		return emptyInput, nil
	}
	p, err := s.sealer.open(ctx, c.token, c.binding)
	if err != nil {
		if e, ok := err.(*Error); ok && e.Cause != nil {
			s.log.DebugContext(ctx, "rejected requestState", "method", c.binding.method, "reason", e.Cause.Error())
		}
		return nil, err
	}
	in := &InputResponses{state: p.State, round: p.Round}
	for _, k := range p.Keys {
		if v, ok := c.responses[k]; ok {
			if in.raw == nil {
				in.raw = make(map[string]json.RawMessage, len(p.Keys))
			}
			in.raw[k] = v
		}
	}
	return in, nil
}

// tooManyInputRounds is the error of a request that asked for input more
// than max times (ServerOptions.MaxInputRounds), in either era.
func tooManyInputRounds(max int) *Error {
	return &Error{Code: CodeInternalError, Message: fmt.Sprintf("This request asked for input more than %d times (the server's limit of input rounds)", max),
		Data: map[string]any{"reason": "too_many_input_rounds", "maxInputRounds": max}}
}

// encodeInputRequired checks an input_required answer against the rules of
// the spec and this request's client capabilities, seals its state and
// encodes the result.
func (s *Server) encodeInputRequired(ctx context.Context, r *Request, e *InputRequiredError, b stateBinding) ([]byte, error) {
	if err := s.checkInputRequired(e, r.declaredCaps(), r.modern); err != nil {
		return nil, err
	}
	round := 1 // this input_required result's number in the call
	if r.Input != nil {
		round += r.Input.round
	}
	if round > s.opts.MaxInputRounds {
		return nil, tooManyInputRounds(s.opts.MaxInputRounds)
	}
	keys := make([]string, 0, len(e.Requests))
	for k := range e.Requests {
		keys = append(keys, k)
	}
	token, err := s.sealer.seal(ctx, e.State, keys, round, b)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, 256+len(token))
	out = append(out, `{"resultType":"input_required",`...)
	if len(e.Requests) > 0 {
		out = append(out, `"inputRequests":{`...)
		for i, k := range sortedKeys(e.Requests) {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(jsonwire.AppendString(out, k), ':')
			var err error
			if out, err = appendInputRequest(out, e.Requests[k]); err != nil {
				return nil, err
			}
		}
		out = append(out, "},"...)
	}
	out = append(jsonwire.AppendString(append(out, `"requestState":`...), token), ',')
	out = r.appendMeta(out, nil)
	out[len(out)-1] = '}'
	return out, nil
}

// appendInputRequest encodes an input request; the builders' form params
// are written directly (their schema is compact JSON already).
func appendInputRequest(b []byte, ir *InputRequest) ([]byte, error) {
	if p, ok := ir.Params.(*ElicitFormParams); ok && p != nil && ir.Method == MethodElicit && json.Valid(p.RequestedSchema) {
		b = append(b, `{"method":"elicitation/create","params":{`...)
		if p.Mode != "" {
			b = append(jsonwire.AppendString(append(b, `"mode":`...), p.Mode), ',')
		}
		b = jsonwire.AppendString(append(b, `"message":`...), p.Message)
		b = append(append(append(b, `,"requestedSchema":`...), p.RequestedSchema...), "}}"...)
		return b, nil
	}
	j, err := json.Marshal(ir)
	if err != nil {
		return nil, err
	}
	return append(b, j...), nil
}

func internalf(format string, args ...any) *Error {
	return &Error{Code: CodeInternalError, Message: "Internal error: " + fmt.Sprintf(format, args...)}
}

// checkInputRequired validates an input_required answer before it is sent,
// with the server's cache of form verdicts.
func (s *Server) checkInputRequired(e *InputRequiredError, caps *ClientCapabilities, modern bool) error {
	return checkInputRequiredWith(&s.formMemo, e, caps, modern)
}

// checkInputRequired validates an input_required answer without a cache.
func checkInputRequired(e *InputRequiredError, caps *ClientCapabilities, modern bool) error {
	return checkInputRequiredWith(nil, e, caps, modern)
}

func checkInputRequiredWith(forms *memo[[2]error], e *InputRequiredError, caps *ClientCapabilities, modern bool) error {
	if len(e.Requests) == 0 && e.State == "" {
		return internalf("an input_required result needs inputRequests or requestState")
	}
	keys := make([]string, 0, len(e.Requests))
	for k := range e.Requests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var missing ClientCapabilities
	anyMissing := false
	for _, k := range keys {
		ir := e.Requests[k]
		if ir == nil {
			return internalf("input request %q is nil", k)
		}
		need, err := checkInputRequest(forms, ir, modern)
		if err != nil {
			return internalf("input request %q: %v", k, err)
		}
		if m := caps.missing(need); m != nil {
			anyMissing = true
			if m.Elicitation != nil {
				if missing.Elicitation == nil {
					missing.Elicitation = &ElicitationCapabilities{}
				}
				if m.Elicitation.Form != nil {
					missing.Elicitation.Form = map[string]any{}
				}
				if m.Elicitation.URL != nil {
					missing.Elicitation.URL = map[string]any{}
				}
			}
			if m.Sampling != nil {
				if missing.Sampling == nil {
					missing.Sampling = &SamplingCapabilities{}
				}
				if m.Sampling.Tools != nil {
					missing.Sampling.Tools = map[string]any{}
				}
			}
			if m.Roots != nil {
				missing.Roots = &RootsCapabilities{}
			}
		}
	}
	if anyMissing {
		return MissingCapabilityError(&missing)
	}
	return nil
}

// checkInputRequest validates one input request and returns the client
// capabilities it needs.
// Capabilities input requests need, shared (never modified).
var (
	needForm     = &ClientCapabilities{Elicitation: &ElicitationCapabilities{Form: map[string]any{}}}
	needURL      = &ClientCapabilities{Elicitation: &ElicitationCapabilities{URL: map[string]any{}}}
	needSampling = &ClientCapabilities{Sampling: &SamplingCapabilities{}}
	needRoots    = &ClientCapabilities{Roots: &RootsCapabilities{}}
)

// checkFormSchemaCached checks a form schema through forms, the server's
// cache of verdicts (schemas are usually the same on every call of a tool:
// modern verdict, legacy verdict), or directly when forms is nil.
func checkFormSchemaCached(forms *memo[[2]error], raw json.RawMessage, modern bool) error {
	if forms == nil {
		return schemas.CheckForm(raw, modern)
	}
	i := 0
	if !modern {
		i = 1
	}
	if v, ok := forms.load(raw); ok {
		return v[i]
	}
	verdict := [2]error{schemas.CheckForm(raw, true), schemas.CheckForm(raw, false)}
	forms.store(raw, verdict, 4096)
	return verdict[i]
}

func checkInputRequest(forms *memo[[2]error], ir *InputRequest, modern bool) (*ClientCapabilities, error) {
	// The builders' types are checked directly; anything else is checked
	// on its JSON form below.
	switch p := ir.Params.(type) {
	case *ElicitFormParams:
		if ir.Method != MethodElicit || p == nil {
			break
		}
		if strings.TrimSpace(p.Message) == "" {
			return nil, fmt.Errorf("the elicitation message is blank")
		}
		if p.Mode != "" && p.Mode != "form" {
			break
		}
		if err := checkFormSchemaCached(forms, p.RequestedSchema, modern); err != nil {
			return nil, err
		}
		return needForm, nil
	case *CreateMessageParams:
		if ir.Method != MethodCreateMessage || p == nil {
			break
		}
		if len(p.Messages) == 0 {
			return nil, fmt.Errorf("a sampling request needs at least one message")
		}
		if p.MaxTokens <= 0 {
			return nil, fmt.Errorf("a sampling request needs a positive maxTokens")
		}
		if len(p.Tools) > 0 {
			return &ClientCapabilities{Sampling: &SamplingCapabilities{Tools: map[string]any{}}}, nil
		}
		return needSampling, nil
	}
	pj, err := json.Marshal(ir.Params)
	if err != nil {
		return nil, err
	}
	switch ir.Method {
	case MethodElicit:
		var p struct {
			Mode            string          `json:"mode"`
			Message         string          `json:"message"`
			RequestedSchema json.RawMessage `json:"requestedSchema"`
			URL             string          `json:"url"`
		}
		if err := json.Unmarshal(pj, &p); err != nil {
			return nil, fmt.Errorf("malformed elicitation params: %v", err)
		}
		if strings.TrimSpace(p.Message) == "" {
			return nil, fmt.Errorf("the elicitation message is blank")
		}
		switch p.Mode {
		case "", "form":
			if err := schemas.CheckForm(p.RequestedSchema, modern); err != nil {
				return nil, err
			}
			return needForm, nil
		case "url":
			u, err := url.Parse(p.URL)
			if err != nil || !u.IsAbs() || u.Host == "" {
				return nil, fmt.Errorf("the elicitation URL %q is not an absolute URL", p.URL)
			}
			return needURL, nil
		}
		return nil, fmt.Errorf("unknown elicitation mode %q", p.Mode)
	case MethodCreateMessage:
		var p struct {
			Messages  []json.RawMessage `json:"messages"`
			MaxTokens int               `json:"maxTokens"`
			Tools     []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(pj, &p); err != nil {
			return nil, fmt.Errorf("malformed sampling params: %v", err)
		}
		if len(p.Messages) == 0 {
			return nil, fmt.Errorf("a sampling request needs at least one message")
		}
		if p.MaxTokens <= 0 {
			return nil, fmt.Errorf("a sampling request needs a positive maxTokens")
		}
		need := &ClientCapabilities{Sampling: &SamplingCapabilities{}}
		if len(p.Tools) > 0 {
			need.Sampling.Tools = map[string]any{}
		}
		return need, nil
	case MethodListRoots:
		return needRoots, nil
	}
	return nil, fmt.Errorf("method %q cannot be an input request", ir.Method)
}
