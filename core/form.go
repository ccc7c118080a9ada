package core

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/mcpfn/mcpfn/core/internal/jsonwire"
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
//	if b, ok := bookingForm.Accepted(req.Input, "booking"); ok { ... }
//	return nil, core.InputRequired(core.InputRequests{"booking": bookingForm.Request("Book a table")}, "")
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
type Form[T any] struct {
	schema json.RawMessage
}

type enumer interface{ Enum() []string }

// NewForm builds the form of T.
func NewForm[T any]() (*Form[T], error) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("core: NewForm[%v]: a form is a struct", t)
	}
	// The properties are written in declaration order: forms are shown to
	// people, and a Go map would sort them.
	raw := []byte(`{"type":"object","properties":{`)
	var required []string
	n := 0
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, omit := f.Name, false
		if tag, ok := f.Tag.Lookup("json"); ok {
			parts := strings.Split(tag, ",")
			if parts[0] == "-" {
				continue
			}
			if parts[0] != "" {
				name = parts[0]
			}
			for _, p := range parts[1:] {
				omit = omit || p == "omitempty" || p == "omitzero"
			}
		}
		prop, hasDefault, err := reflectFormField(f)
		if err != nil {
			return nil, fmt.Errorf("core: NewForm[%v]: field %s: %v", t, f.Name, err)
		}
		pj, err := json.Marshal(prop)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			raw = append(raw, ',')
		}
		n++
		raw = append(jsonwire.AppendString(raw, name), ':')
		raw = append(raw, pj...)
		if !omit && !hasDefault {
			required = append(required, name)
		}
	}
	raw = append(raw, '}')
	if len(required) > 0 {
		rj, err := json.Marshal(required)
		if err != nil {
			return nil, err
		}
		raw = append(append(raw, `,"required":`...), rj...)
	}
	raw = append(raw, '}')
	if err := checkFormSchema(raw, true); err != nil {
		return nil, fmt.Errorf("core: NewForm[%v]: %v", t, err)
	}
	return &Form[T]{schema: raw}, nil
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

// Accepted decodes the accepted answer to key into T (see the function
// Accepted).
func (f *Form[T]) Accepted(in *InputResponses, key string) (T, bool) {
	return Accepted[T](in, key)
}

func reflectFormField(f reflect.StructField) (map[string]any, bool, error) {
	p := map[string]any{}
	st, err := parseSchemaTag(f)
	if err != nil {
		return nil, false, err
	}
	// tag reads key from the jsonschema tag, else from the older tag of the
	// same name (title:"...", minimum:"1"), kept for compatibility.
	tag := func(key string) string {
		if v, ok := st.get(key); ok {
			return v
		}
		return f.Tag.Get(key)
	}
	if v := tag("title"); v != "" {
		p["title"] = v
	}
	if st.desc != "" {
		p["description"] = st.desc
	} else if v := tag("description"); v != "" {
		p["description"] = v
	} else if v := f.Tag.Get("jsonschema_description"); v != "" {
		p["description"] = v
	}
	enum, titles, err := enumOf(f, st)
	if err != nil {
		return nil, false, err
	}
	ft := f.Type
	num := func(key, v string) error {
		if v == "" {
			return nil
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("tag %s=%q is not a number", key, v)
		}
		p[key] = n
		return nil
	}
	var dflt any
	dv, hasDefault := strings.Join(st.kv["default"], ","), len(st.kv["default"]) > 0
	if !hasDefault {
		dv, hasDefault = f.Tag.Lookup("default")
	}
	switch ft.Kind() {
	case reflect.String:
		p["type"] = "string"
		if v := tag("format"); v != "" {
			switch v {
			case "email", "uri", "date", "date-time":
				p["format"] = v
			default:
				return nil, false, fmt.Errorf("format %q is not one of email, uri, date, date-time", v)
			}
		}
		for _, k := range []string{"minLength", "maxLength"} {
			if err := num(k, tag(k)); err != nil {
				return nil, false, err
			}
		}
		if enum != nil {
			if titles != nil {
				one := make([]map[string]string, len(enum))
				for i := range enum {
					one[i] = map[string]string{"const": enum[i], "title": titles[i]}
				}
				p["oneOf"] = one
			} else {
				p["enum"] = enum
			}
		}
		dflt = dv
	case reflect.Bool:
		p["type"] = "boolean"
		if hasDefault {
			b, err := strconv.ParseBool(dv)
			if err != nil {
				return nil, false, fmt.Errorf("default %q is not a boolean", dv)
			}
			dflt = b
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		p["type"] = "integer"
		for _, k := range []string{"minimum", "maximum"} {
			if err := num(k, tag(k)); err != nil {
				return nil, false, err
			}
		}
		if hasDefault {
			n, err := strconv.ParseInt(dv, 10, 64)
			if err != nil {
				return nil, false, fmt.Errorf("default %q is not an integer", dv)
			}
			dflt = n
		}
	case reflect.Float32, reflect.Float64:
		p["type"] = "number"
		for _, k := range []string{"minimum", "maximum"} {
			if err := num(k, tag(k)); err != nil {
				return nil, false, err
			}
		}
		if hasDefault {
			n, err := strconv.ParseFloat(dv, 64)
			if err != nil {
				return nil, false, fmt.Errorf("default %q is not a number", dv)
			}
			dflt = n
		}
	case reflect.Slice:
		if ft.Elem().Kind() != reflect.String {
			return nil, false, fmt.Errorf("type %v is not allowed in a form: only a slice of strings (a multi-select)", ft)
		}
		if enum == nil {
			return nil, false, fmt.Errorf("a multi-select needs enum values (tag enum:\"a,b\" or an Enum() []string method)")
		}
		p["type"] = "array"
		if titles != nil {
			alts := make([]map[string]string, len(enum))
			for i := range enum {
				alts[i] = map[string]string{"const": enum[i], "title": titles[i]}
			}
			p["items"] = map[string]any{"anyOf": alts}
		} else {
			p["items"] = map[string]any{"type": "string", "enum": enum}
		}
		for _, k := range []string{"minItems", "maxItems"} {
			if err := num(k, tag(k)); err != nil {
				return nil, false, err
			}
		}
		if hasDefault {
			var d []string
			for _, v := range strings.Split(dv, ",") {
				if v != "" {
					d = append(d, v)
				}
			}
			for _, v := range d {
				if !contains(enum, v) {
					return nil, false, fmt.Errorf("default %q is not among the enum values", v)
				}
			}
			dflt = d
		}
	default:
		return nil, false, fmt.Errorf("type %v is not allowed in a form (string, bool, integer, float, or []string)", ft)
	}
	if enum != nil && ft.Kind() != reflect.String && ft.Kind() != reflect.Slice {
		return nil, false, fmt.Errorf("enum values on a %v field", ft)
	}
	if hasDefault {
		if ft.Kind() == reflect.String && enum != nil && !contains(enum, dv) {
			return nil, false, fmt.Errorf("default %q is not among the enum values", dv)
		}
		p["default"] = dflt
	}
	return p, hasDefault, nil
}

func enumOf(f reflect.StructField, st schemaTag) (values, titles []string, err error) {
	if v, ok := st.kv["enum"]; ok {
		values = v
	} else if v, ok := f.Tag.Lookup("enum"); ok {
		values = splitList(v)
	} else {
		t := f.Type
		if t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Implements(reflect.TypeFor[enumer]()) {
			values = reflect.Zero(t).Interface().(enumer).Enum()
		}
	}
	if values != nil && len(values) == 0 {
		return nil, nil, fmt.Errorf("empty enum")
	}
	if v, ok := st.kv["enumTitles"]; ok {
		titles = v
	} else if v, ok := f.Tag.Lookup("enumTitles"); ok {
		titles = splitList(v)
	}
	if titles != nil {
		if len(titles) != len(values) {
			return nil, nil, fmt.Errorf("enumTitles has %d entries for %d enum values", len(titles), len(values))
		}
	}
	return values, titles, nil
}

func splitList(s string) []string {
	out := []string{}
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
