package core

import (
	"encoding/json"
	"fmt"
	"strings"

	schemas "github.com/mcpfn/mcpfn/core/internal/schema"
	"github.com/mcpfn/mcpfn/internal/jsonwire"
	"github.com/mcpfn/mcpfn/mcp"
)

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
	keys := sortedKeys(e.Requests)
	return "input required: " + strings.Join(keys, ", ")
}

// InputRequired returns the error a handler returns to ask for input. state
// is optional; requests may be empty when state is set (e.g. to ask the
// client to retry later).
func InputRequired(requests InputRequests, state string) error {
	return &InputRequiredError{Requests: requests, State: state}
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
// cancelled ones (check Action), and false when key has no such answer. For
// a form whose content should be decoded into a struct, Answer does both.
func (in *InputResponses) Elicitation(key string) (*ElicitResult, bool) {
	return answerAs(in, key, func(r *ElicitResult) bool { return validAction(r.Action) })
}

func validAction(a string) bool {
	return a == ActionAccept || a == ActionDecline || a == ActionCancel
}

// Sampling returns the sampling answer for key.
func (in *InputResponses) Sampling(key string) (*CreateMessageResult, bool) {
	return answerAs(in, key, func(r *CreateMessageResult) bool { return r.Content != nil })
}

// Roots returns the roots answer for key.
func (in *InputResponses) Roots(key string) (*ListRootsResult, bool) {
	return answerAs(in, key, func(r *ListRootsResult) bool { return r.Roots != nil })
}

// answerAs decodes the object answer for key into T, which valid accepts.
func answerAs[T any](in *InputResponses, key string, valid func(*T) bool) (*T, bool) {
	raw, ok := in.Raw(key)
	if !ok || !jsonwire.IsObject(raw) {
		return nil, false
	}
	var r T
	if json.Unmarshal(raw, &r) != nil || !valid(&r) {
		return nil, false
	}
	return &r, true
}

// Answer returns the user's answer to the form elicitation asked under key:
// the action, and with ActionAccept the form's content decoded into T
// (case-sensitive names, as tool arguments). A handler acts on the action:
//
//   - "" (and a nil error): key has no answer in this round, as in the
//     first round: ask, by returning InputRequired;
//   - ActionAccept: use the content;
//   - ActionDecline or ActionCancel: the user said no, or dismissed the
//     form: end the call (a result saying nothing was done, or a ToolError),
//     and do not ask again, which would show the user the same form until
//     ServerOptions.MaxInputRounds ends the call with an error.
//
// The error is an invalid-params error (-32602) for an answer the client
// got wrong: not an elicitation answer, or accepted with content that does
// not convert to T. The handler returns it as is. The zero T comes with
// every action but ActionAccept.
//
//	c, action, err := core.Answer[Confirm](req.Input, "confirm")
//	switch {
//	case err != nil:
//		return "", err
//	case action == "":
//		return "", core.InputRequired(core.InputRequests{"confirm": core.ElicitForm("Delete it?", schema)}, "")
//	case action != core.ActionAccept || !c.OK:
//		return "Kept it.", nil // declined, cancelled or unchecked: the call ends
//	}
//	// ... delete it
//
// Form.Answer is the same and also checks the content against the form's
// schema.
func Answer[T any](in *InputResponses, key string) (T, string, error) {
	return answerContent[T](in, key, nil)
}

// answerContent is Answer; check, when not nil, validates accepted content.
func answerContent[T any](in *InputResponses, key string, check *schemas.Compiled) (T, string, error) {
	var zero T
	raw, ok := in.Raw(key)
	if !ok {
		return zero, "", nil
	}
	bad := func(why string) (T, string, error) {
		return zero, "", InvalidParamsError("Invalid params: the answer to input request %q %s", key, why)
	}
	if !jsonwire.IsObject(raw) {
		return bad("is not an elicitation result")
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
	switch {
	case !validAction(action):
		return bad(`has no action "accept", "decline" or "cancel"`)
	case action != ActionAccept:
		return zero, action, nil
	case !jsonwire.IsObject(content):
		return bad("is accepted without the form's content")
	}
	if check != nil && !check.ProvenValid(content) {
		v, err := schemas.DecodeForValidation(content)
		if err == nil {
			err = check.Validate(v)
		}
		if err != nil {
			return bad(fmt.Sprintf("does not fit the form: %v", err))
		}
	}
	v, err := bindValidated[T](content)
	if err != nil {
		return bad(fmt.Sprintf("does not fit the form: %v", bindError(err)))
	}
	return v, ActionAccept, nil
}

// Accepted decodes the content of an accepted elicitation answer into T. It
// reports false when the key was not answered, was declined or cancelled, or
// its content does not convert to T, without telling which: false alone
// does not mean "ask". A handler that asks again whenever Accepted reports
// false asks a user who declined until ServerOptions.MaxInputRounds ends the
// call; use Answer, which tells the cases apart, to decide whether to ask.
func Accepted[T any](in *InputResponses, key string) (T, bool) {
	v, action, err := Answer[T](in, key)
	return v, err == nil && action == ActionAccept
}
