package core

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/mcpfn/mcpfn/core/internal/schema"
)

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
