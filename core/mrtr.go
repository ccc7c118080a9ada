package core

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/mcpfn/mcpfn/core/internal/schema"
	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// DefaultMaxInputRounds is how many times one request may ask the client
// for input when ServerOptions.MaxInputRounds is zero.
const DefaultMaxInputRounds = 16

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

// ElicitForm asks the user to fill in a form. requestedSchema is a flat
// object schema of string, number, integer, boolean and enum properties,
// given as any JSON value (json.RawMessage, map). It is checked before it is
// sent.
func ElicitForm(message string, requestedSchema any) *InputRequest {
	raw, err := schema.Normalize(requestedSchema)
	if err != nil {
		raw = json.RawMessage(`null`)
	}
	return &InputRequest{Method: MethodElicit, Params: &ElicitFormParams{Mode: "form", Message: message, RequestedSchema: raw}}
}

// ElicitURL asks the user to open an absolute URL (URL-mode elicitation).
func ElicitURL(message, rawURL string) *InputRequest {
	return &InputRequest{Method: MethodElicit, Params: &ElicitURLParams{Mode: "url", Message: message, URL: rawURL}}
}

// Sample asks the client's model for a completion (sampling/createMessage).
// Sampling is deprecated in 2026-07-28 (SEP-2577) and still served: the
// client must declare the sampling capability (see
// [Request.RequireCapabilities]).
func Sample(p *CreateMessageParams) *InputRequest {
	return &InputRequest{Method: MethodCreateMessage, Params: p}
}

// SampleText is Sample with one user text message. Sampling is deprecated in
// 2026-07-28 (SEP-2577) and still served.
func SampleText(prompt string, maxTokens int) *InputRequest {
	return Sample(&CreateMessageParams{
		Messages:  []SamplingMessage{{Role: RoleUser, Content: &TextContent{Text: prompt}}},
		MaxTokens: maxTokens,
	})
}

// ListRoots asks the client for its roots (roots/list). Roots are deprecated
// in 2026-07-28 (SEP-2577) and still served: the client must declare the roots
// capability.
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
func answerContent[T any](in *InputResponses, key string, check *schema.Compiled) (T, string, error) {
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
		v, err := schema.DecodeForValidation(content)
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

// Form is a form elicitation whose schema is generated once from the struct
// type T. Create it at registration time with NewForm (or MustForm) and use
// it in handlers:
//
//	type Booking struct {
//		Name   string `json:"name" jsonschema:"title=Name,description=Who is the table for?"`
//		Guests int    `json:"guests" jsonschema:"minimum=1,maximum=12,default=2"`
//		Time   string `json:"time" jsonschema:"enum=18:00,enum=19:00,enum=20:00"`
//		Notes  string `json:"notes,omitempty" jsonschema:"Anything we should know"`
//	}
//	var bookingForm = core.MustForm[Booking]()
//
//	// in the handler:
//	b, action, err := bookingForm.Answer(req.Input, "booking")
//	switch {
//	case err != nil:
//		return nil, err // the client's answer does not fit the form
//	case action == "": // not answered yet: ask
//		return nil, core.InputRequired(core.InputRequests{"booking": bookingForm.Request("Book a table")}, "")
//	case action != core.ActionAccept: // declined or cancelled: end the call, do not ask again
//		return nil, core.ToolErrorf("the user did not book a table")
//	}
//	// ... book the table b
//
// Fields are described with the jsonschema tag, the same dialect as tool
// arguments (see the package documentation): key=value items, or a bare
// description. The properties keep the declaration order of the fields.
// Fields may be strings, booleans, integers or floats, and a slice of strings
// for a multi-select. A string field with enum values is a single-select.
// Go cannot list a type's constants, so enum values are declared explicitly:
// with enum=a,enum=b items or by giving the field's type a method
// Enum() []string; enumTitles=A,enumTitles=B items add display titles. Other
// keys: title, description, default (repeated for a multi-select), format
// (email, uri, date, date-time), minLength, maxLength, minimum, maximum,
// minItems, maxItems. The older separate tags of the same names
// (title:"Name", enum:"a,b,c", ...) are still read when the jsonschema tag
// does not set the key. A field tagged omitempty, or with a default, is
// optional; the others are required. Any other field type (nested struct,
// map, pointer, interface) is an error naming the field.
//
// A Form is immutable and safe for concurrent use.
type Form[T any] struct {
	schema json.RawMessage
	check  *schema.Compiled // validates accepted content
}

// NewForm builds the form of T.
func NewForm[T any]() (*Form[T], error) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("core: NewForm[%v]: a form is a struct", t)
	}
	raw, err := schema.Form(t)
	if err != nil {
		return nil, fmt.Errorf("core: NewForm[%v]: %v", t, err)
	}
	check, err := schema.Compile(raw, false) // resolved on the first answer
	if err != nil {
		return nil, fmt.Errorf("core: NewForm[%v]: %v", t, err)
	}
	return &Form[T]{schema: raw, check: check}, nil
}

// MustForm is NewForm that panics on error, for package-level variables.
func MustForm[T any]() *Form[T] {
	f, err := NewForm[T]()
	if err != nil {
		panic(err.Error())
	}
	return f
}

// Schema returns the form's requestedSchema.
func (f *Form[T]) Schema() json.RawMessage { return f.schema }

// Request returns the form elicitation with message.
func (f *Form[T]) Request(message string) *InputRequest {
	return &InputRequest{Method: MethodElicit, Params: &ElicitFormParams{Mode: "form", Message: message, RequestedSchema: f.schema}}
}

// Answer returns the user's answer to the form asked under key, as the
// function Answer does: "" when key has no answer yet (ask),
// ActionAccept with the content, or ActionDecline or ActionCancel (end the
// call; do not ask again). Accepted content is also checked against the
// form's schema (required fields, enum values, bounds): content that does
// not fit is the -32602 error, so the handler only sees values the form
// allows.
func (f *Form[T]) Answer(in *InputResponses, key string) (T, string, error) {
	return answerContent[T](in, key, f.check)
}

// Accepted returns the content of an accepted answer to key that fits the
// form, and false otherwise: not answered, declined, cancelled or invalid,
// without telling which. Use Answer to decide whether to ask (see the
// function Accepted).
func (f *Form[T]) Accepted(in *InputResponses, key string) (T, bool) {
	v, action, err := f.Answer(in, key)
	return v, err == nil && action == ActionAccept
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
	if !c.hasToken {
		r.Input = emptyInput // a first round (openInput)
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

// encodeInputRequired checks an input_required answer against the rules of
// the spec and this request's client capabilities, seals its state and
// encodes the result.
func (s *Server) encodeInputRequired(ctx context.Context, r *Request, e *InputRequiredError, b stateBinding) ([]byte, error) {
	if err := s.checkInputRequired(e, r.declaredCaps(), r.era.strictForms()); err != nil {
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
	out = r.era.appendMeta(out, s, nil)
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

// parseParams walks the members of params: own reads the method's own
// members and reports whether it took k; the others go to parseMRTRParams.
func parseParams(params []byte, own func(k, v []byte) bool, responses *map[string]json.RawMessage, state *string, hasState *bool) error {
	var perr error
	jsonwire.EachMember(params, func(k, v []byte) bool {
		if own(k, v) {
			return true
		}
		if _, err := parseMRTRParams(k, v, responses, state, hasState); err != nil {
			perr = err
			return false
		}
		return true
	})
	return perr
}

// parseMRTRParams reads the members every MRTR-capable method shares.
func parseMRTRParams(k, v []byte, responses *map[string]json.RawMessage, state *string, hasState *bool) (handled bool, err error) {
	switch {
	case jsonwire.KeyIs(k, "inputResponses"):
		if jsonwire.IsNull(v) {
			return true, nil
		}
		if !jsonwire.IsObject(v) {
			return true, InvalidParamsError("Invalid params: inputResponses must be an object")
		}
		if err := checkArguments("inputResponses", v); err != nil {
			return true, err
		}
		m := map[string]json.RawMessage{}
		jsonwire.EachMember(v, func(ik, iv []byte) bool {
			key, _ := jsonwire.KeyString(ik)
			m[key] = iv
			return true
		})
		*responses = m
		return true, nil
	case jsonwire.KeyIs(k, "requestState"):
		if jsonwire.IsNull(v) {
			return true, nil
		}
		s, ok := jsonwire.RawString(v)
		if !ok {
			return true, InvalidParamsError("Invalid params: requestState must be a string")
		}
		*state, *hasState = s, true
		return true, nil
	}
	return false, nil
}
