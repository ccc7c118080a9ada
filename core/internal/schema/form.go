package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

type enumer interface{ Enum() []string }

// Form derives the requested schema of a form elicitation from the struct
// type t (core.NewForm documents the dialect): a flat object whose
// properties keep the declaration order of the fields, checked with
// CheckForm.
func Form(t reflect.Type) (json.RawMessage, error) {
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
			return nil, fmt.Errorf("field %s: %v", f.Name, err)
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
	if err := CheckForm(raw, true); err != nil {
		return nil, err
	}
	return raw, nil
}

func reflectFormField(f reflect.StructField) (map[string]any, bool, error) {
	p := map[string]any{}
	st, err := parseSchemaTag(f)
	if err != nil {
		return nil, false, err
	}
	if err := checkFormTag(f, st); err != nil {
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
