package schema

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"
)

// The one tag dialect of derived schemas, for tools and forms alike, is the
// `jsonschema` struct tag (see docs/design.md, "Tools, arguments and
// results"):
//
//   - key=value items separated by commas, as invopop/jsonschema reads them:
//     jsonschema:"description=The city,enum=a,enum=b,minimum=1" (a comma
//     inside a value is escaped as \,);
//   - or a bare description, as the official Go SDK writes it:
//     jsonschema:"the city". A tag whose first item has no '=' and is not
//     one of the flags "-", "required", "Nullable" is a description, commas
//     included, provided no later item could be read as a keyword; an
//     ambiguous tag is a registration error.

// schemaFlags are the jsonschema tag items without '=' of the dialect
// (invopop reads "-", "required" and "nullable").
var schemaFlags = toolFlags

// schemaTag is a parsed jsonschema struct tag.
type schemaTag struct {
	desc string              // a bare description (the whole tag)
	kv   map[string][]string // key=value items, values in order
}

// splitTagItems splits a tag on commas not escaped as \,.
func splitTagItems(tag string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(tag); i++ {
		switch {
		case tag[i] == '\\' && i+1 < len(tag) && tag[i+1] == ',':
			cur.WriteByte(',')
			i++
		case tag[i] == ',':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(tag[i])
		}
	}
	return append(out, cur.String())
}

// parseSchemaTag parses the jsonschema tag of a field.
func parseSchemaTag(f reflect.StructField) (schemaTag, error) {
	var st schemaTag
	tag, ok := f.Tag.Lookup("jsonschema")
	if !ok || tag == "" {
		return st, nil
	}
	items := splitTagItems(tag)
	if first := items[0]; !strings.Contains(first, "=") && !schemaFlags[strings.TrimSpace(first)] {
		for _, it := range items[1:] {
			if strings.Contains(it, "=") || schemaFlags[strings.TrimSpace(it)] {
				return st, fmt.Errorf("jsonschema tag %q is ambiguous: it starts as a description but %q reads as a keyword; write jsonschema:\"description=...\" with commas escaped as \\,", tag, it)
			}
		}
		st.desc = strings.ReplaceAll(tag, `\,`, ",")
		return st, nil
	}
	st.kv = map[string][]string{}
	for _, it := range items {
		if k, v, ok := strings.Cut(it, "="); ok {
			st.kv[k] = append(st.kv[k], v)
		}
	}
	return st, nil
}

// get returns the last value of key.
func (st schemaTag) get(key string) (string, bool) {
	v := st.kv[key]
	if len(v) == 0 {
		return "", false
	}
	return v[len(v)-1], true
}

// errRecursive is wrapped by the error For returns for a recursive type.
var errRecursive = errors.New("recursive type")

var customSchemaType = reflect.TypeFor[interface{ JSONSchema() *jsonschema.Schema }]()

// applyTagDescriptions walks t beside its reflected schema s and sets the
// bare descriptions of jsonschema tags, which invopop ignores, and refuses
// ambiguous tags.
func applyTagDescriptions(t reflect.Type, s *jsonschema.Schema) error {
	if s == nil {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return applyTagDescriptions(t.Elem(), s.Items)
	case reflect.Map:
		return applyTagDescriptions(t.Elem(), s.AdditionalProperties)
	case reflect.Struct:
	default:
		return nil
	}
	if t.Implements(customSchemaType) || reflect.PointerTo(t).Implements(customSchemaType) {
		return nil
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		jname, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if jname == "-" {
			continue
		}
		if f.Anonymous && jname == "" {
			if err := applyTagDescriptions(f.Type, s); err != nil {
				return err
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		st, err := parseSchemaTag(f)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		name := f.Name
		if jname != "" {
			name = jname
		}
		if s.Properties == nil {
			continue
		}
		prop, ok := s.Properties.Get(name)
		if !ok {
			continue
		}
		if st.desc != "" && prop.Description == "" {
			prop.Description = st.desc
		}
		if err := applyTagDescriptions(f.Type, prop); err != nil {
			return err
		}
	}
	return nil
}
