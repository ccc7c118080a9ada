package schema

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// Output derives the output schema of a tool's result type t, as For
// does, and fits it to what encoding/json writes for values of t: a typed
// tool's results are sent without validation when the schema is exact, so
// the schema must accept every one of them. invopop describes Go types,
// not their encoding; the fitting corrects it where the two differ:
//
//   - a nil pointer, slice or map encodes as null: its schema accepts null
//     (the root's too);
//   - a field promoted through an embedded pointer is left out when the
//     pointer is nil, and encoding/json drops a name two embedded fields
//     share at the same depth: neither is required;
//   - json.Number encodes as a number; a slice of a byte type as a base64
//     string; a map with signed integer keys may have negative keys, and
//     one with encoding.TextMarshaler keys any key;
//   - a type that encodes itself (json.Marshaler, encoding.TextMarshaler,
//     time.Time and net.IP aside) is described by nothing ({}): its
//     encoding is its own, and a JSONSchema method describes it;
//   - a member encoding/json writes that the generator did not describe
//     (a field tagged jsonschema:"-") is described by nothing.
//
// exact reports that the schema asserts nothing the Go type does not
// guarantee: no constraint from a jsonschema or jsonschema_extras tag
// (minimum, enum, pattern, required on a field encoding/json may leave
// out, ...), and no type that supplies or changes its own schema (a
// JSONSchema method). Results of an exact schema need no validation;
// those of an inexact one do.
func Output(t reflect.Type) (raw json.RawMessage, exact bool, err error) {
	b, err := reflectType(t)
	if err != nil {
		return nil, false, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // keep the numbers of tags as written
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, false, err
	}
	f := &fitter{exact: true}
	v = f.fit(t, objectSubschemas(v, false))
	out, err := json.Marshal(v)
	return out, f.exact, err
}

// fitter fits a reflected schema (decoded JSON) to the encoding of a type.
type fitter struct {
	exact bool
}

// fit returns the schema node, fitted to the encoding of values of t.
func (f *fitter) fit(t reflect.Type, node any) any {
	m, ok := node.(map[string]any)
	if !ok {
		return node // true: accepts anything
	}
	if t.Kind() == reflect.Pointer {
		// A nil pointer encodes as null, whatever its element's encoding.
		return nullable(f.fit(t.Elem(), m))
	}
	switch {
	case describesItself(t):
		f.exact = false // its author describes it: results are validated
		return m
	case t == timeType:
		return m // an RFC 3339 string, as described
	case t == ipType:
		delete(m, "format") // invopop says ipv4; an IPv6 address is not
		return m
	case t == jsonNumberType:
		return withType(describing(m), "number")
	case encodesItself(t):
		return describing(m)
	}
	switch t.Kind() {
	case reflect.Slice:
		if encodesBase64(t) {
			d := withType(describing(m), "string")
			d["contentEncoding"] = "base64"
			return nullable(d)
		}
		if items, ok := m["items"]; ok {
			m["items"] = f.fit(t.Elem(), items)
		}
		return nullable(m)
	case reflect.Array:
		if items, ok := m["items"]; ok {
			m["items"] = f.fit(t.Elem(), items)
		}
		return m
	case reflect.Map:
		f.fitMap(t, m)
		return nullable(m)
	case reflect.Struct:
		return f.fitStruct(t, m)
	}
	return m
}

// fitMap fits the schema of a map: its values, and the keys encoding/json
// writes (a string key as it is, then a TextMarshaler's text, then an
// integer in decimal).
func (f *fitter) fitMap(t reflect.Type, m map[string]any) {
	var elem any
	if pp, ok := m["patternProperties"].(map[string]any); ok {
		for _, v := range pp {
			elem = v // invopop writes one pattern, for integer keys
		}
	} else if ap, ok := m["additionalProperties"]; ok {
		elem = ap
	}
	if elem != nil {
		elem = f.fit(t.Elem(), elem)
	}
	k := t.Key()
	pattern := ""
	switch {
	case k.Kind() == reflect.String, k.Implements(textMarshalerType):
	case k.Kind() >= reflect.Int && k.Kind() <= reflect.Int64:
		pattern = "^-?[0-9]+$"
	default:
		pattern = "^[0-9]+$"
	}
	delete(m, "patternProperties")
	delete(m, "additionalProperties")
	switch {
	case pattern != "":
		if elem == nil {
			elem = map[string]any{}
		}
		m["patternProperties"] = map[string]any{pattern: elem}
		m["additionalProperties"] = false
	case elem != nil:
		m["additionalProperties"] = elem
	}
}

// fitStruct fits the schema of a struct to the members encoding/json
// writes (encodedFields).
func (f *fitter) fitStruct(t reflect.Type, m map[string]any) any {
	props, ok := m["properties"].(map[string]any)
	if m["type"] != "object" || !ok {
		// The generator described t otherwise (url.URL as a string, which
		// encoding/json writes as an object): describe nothing.
		return describing(m)
	}
	emitted := map[string]*encodedField{}
	fields := encodedFields(t)
	for i := range fields {
		fl := &fields[i]
		emitted[fl.name] = fl
		if tagAsserts(fl.sf) {
			f.exact = false
		}
		p, ok := props[fl.name]
		if !ok {
			props[fl.name] = map[string]any{} // written, not described
			continue
		}
		props[fl.name] = f.fitField(fl, p)
	}
	req, _ := m["required"].([]any)
	kept := req[:0]
	for _, r := range req {
		name, _ := r.(string)
		fl := emitted[name]
		switch {
		case fl != nil && fl.always:
			kept = append(kept, r)
		case fl != nil && hasFlag(fl.sf, "required"):
			// Declared by its author, though encoding/json may leave it
			// out: results are validated.
			kept = append(kept, r)
			f.exact = false
		}
		// Otherwise the generator required a member encoding/json may
		// not write (promoted through an embedded pointer, or a name two
		// embedded fields share): it is not required.
	}
	if len(kept) == 0 {
		delete(m, "required")
	} else {
		m["required"] = kept
	}
	return m
}

// fitField fits the schema of a struct member.
func (f *fitter) fitField(fl *encodedField, node any) any {
	m, ok := node.(map[string]any)
	if !ok {
		return node
	}
	// The nullable flag wraps the schema in oneOf with {"type":"null"}.
	// Once the inner schema accepts null (a pointer, slice or map), null
	// matches both and oneOf fails; anyOf says what was meant.
	if alts, ok := m["oneOf"].([]any); ok && len(alts) == 2 && isNullSchema(alts[1]) && hasFlag(fl.sf, "nullable") {
		alts[0] = f.fitValue(fl, alts[0])
		m["anyOf"] = alts
		delete(m, "oneOf")
		return m
	}
	return f.fitValue(fl, m)
}

// fitValue fits the schema of a member's value.
func (f *fitter) fitValue(fl *encodedField, node any) any {
	if fl.quoted && derefType(fl.typ) == jsonNumberType {
		// ",string": the number is written inside a JSON string.
		m, _ := node.(map[string]any)
		var s any = withType(describing(m), "string")
		if fl.typ.Kind() == reflect.Pointer {
			s = nullable(s)
		}
		return s
	}
	return f.fit(fl.typ, node)
}

// encodesItself reports whether encoding/json hands values of t (or of *t,
// when addressable) to their own MarshalJSON or MarshalText.
func encodesItself(t reflect.Type) bool {
	for _, m := range []reflect.Type{jsonMarshalerType, textMarshalerType} {
		if t.Implements(m) || reflect.PointerTo(t).Implements(m) {
			return true
		}
	}
	return false
}

var jsonMarshalerType = reflect.TypeFor[json.Marshaler]()

// encodesBase64 reports whether encoding/json writes the slice type t as a
// base64 string: its elements are of a byte kind that does not encode
// itself.
func encodesBase64(t reflect.Type) bool {
	e := t.Elem()
	return e.Kind() == reflect.Uint8 && !encodesItself(e)
}

// nullable makes a schema node also accept null.
func nullable(node any) any {
	m, ok := node.(map[string]any)
	if !ok {
		return node
	}
	switch ty := m["type"].(type) {
	case string:
		if ty != "null" {
			m["type"] = []any{ty, "null"}
		}
		return m
	case []any:
		for _, x := range ty {
			if x == "null" {
				return m
			}
		}
		m["type"] = append(ty, "null")
		return m
	}
	if alts, ok := m["anyOf"].([]any); ok && slices.ContainsFunc(alts, isNullSchema) {
		return m
	}
	for _, k := range []string{"enum", "const", "not", "allOf", "anyOf", "oneOf", "$ref", "$dynamicRef", "if"} {
		if _, ok := m[k]; ok {
			// A keyword that may refuse null: add null beside it.
			return map[string]any{"anyOf": []any{m, map[string]any{"type": "null"}}}
		}
	}
	return m // no keyword refuses null
}

func isNullSchema(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 1 && m["type"] == "null"
}

// describing returns the keywords of m that describe without asserting
// (title, description, ...): a schema that accepts anything, as documented.
func describing(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		switch k {
		case "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment":
			out[k] = v
		default:
			if strings.HasPrefix(k, "x-") {
				out[k] = v
			}
		}
	}
	return out
}

func withType(m map[string]any, t string) map[string]any {
	m["type"] = t
	return m
}

// hasFlag reports whether the jsonschema tag of f has the flag (an item
// without '=').
func hasFlag(f reflect.StructField, flag string) bool {
	tag := f.Tag.Get("jsonschema")
	if tag == "" {
		return false
	}
	for _, it := range splitTagItems(tag) {
		if it == flag {
			return true
		}
	}
	return false
}

// tagAsserts reports whether the tags of f add a keyword that may refuse a
// value of its type: any key of the jsonschema tag but the annotations,
// and any key of the jsonschema_extras tag but x-* extensions.
func tagAsserts(f reflect.StructField) bool {
	st, _ := parseSchemaTag(f) // checkType refused the tags it cannot parse
	for k := range st.kv {
		if !annotationKeys[k] {
			return true
		}
	}
	if tag := f.Tag.Get("jsonschema_extras"); tag != "" {
		for _, it := range splitTagItems(tag) {
			if k, _, _ := strings.Cut(it, "="); !strings.HasPrefix(k, "x-") {
				return true
			}
		}
	}
	return false
}

// encodedField is a member encoding/json writes for a struct type.
type encodedField struct {
	name   string
	typ    reflect.Type // the field's type
	sf     reflect.StructField
	index  []int
	tagged bool // named by its json tag
	// always: written for every value (no omitempty or omitzero, and not
	// promoted through an embedded pointer, which may be nil).
	always bool
	// quoted: the ",string" option applies (a scalar written inside a
	// JSON string).
	quoted bool
}

// encodedFields returns the members encoding/json writes for the struct
// type t, by its rules (encoding/json's typeFields): exported fields and
// the fields of embedded structs, breadth first; of the fields that share
// a name the shallowest wins, then the one its json tag names, and a tie
// writes neither.
func encodedFields(t reflect.Type) []encodedField {
	type level struct {
		typ    reflect.Type
		index  []int
		viaPtr bool
	}
	var current []level
	next := []level{{typ: t}}
	var count, nextCount map[reflect.Type]int
	visited := map[reflect.Type]bool{}
	var fields []encodedField
	for len(next) > 0 {
		current, next = next, current[:0]
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, l := range current {
			if visited[l.typ] {
				continue
			}
			visited[l.typ] = true
			for i := 0; i < l.typ.NumField(); i++ {
				sf := l.typ.Field(i)
				if sf.Anonymous {
					et := sf.Type
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if !sf.IsExported() && et.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validJSONName(name) {
					name = ""
				}
				index := append(slices.Clone(l.index), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					quoted := false
					if hasOption(opts, "string") {
						switch ft.Kind() {
						case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
							reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
							reflect.Float32, reflect.Float64, reflect.String:
							quoted = true
						}
					}
					fl := encodedField{name: name, typ: sf.Type, sf: sf, index: index, tagged: name != "", quoted: quoted,
						always: !l.viaPtr && !hasOption(opts, "omitempty") && !hasOption(opts, "omitzero")}
					if fl.name == "" {
						fl.name = sf.Name
					}
					fields = append(fields, fl)
					if count[l.typ] > 1 {
						// The same embedded type twice at this depth: a
						// duplicate, so that neither is written.
						fields = append(fields, fl)
					}
					continue
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, level{typ: ft, index: index, viaPtr: l.viaPtr || sf.Type.Kind() == reflect.Pointer})
				}
			}
		}
	}
	sort.SliceStable(fields, func(i, j int) bool {
		a, b := fields[i], fields[j]
		if a.name != b.name {
			return a.name < b.name
		}
		if len(a.index) != len(b.index) {
			return len(a.index) < len(b.index)
		}
		return a.tagged && !b.tagged
	})
	out := fields[:0]
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		g := fields[i:j]
		if len(g) == 1 || len(g[0].index) < len(g[1].index) || g[0].tagged != g[1].tagged {
			out = append(out, g[0])
		}
		i = j
	}
	return out
}

// validJSONName reports whether encoding/json uses name, from a json tag,
// as a member name (else it uses the field's name).
func validJSONName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
