package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/invopop/jsonschema"
)

// For derives the JSON Schema of t with invopop/jsonschema, configured so
// that the root is inline (no $ref, no $defs) and carries no $schema or $id.
// Reflection happens once per tool, at registration. A recursive type is an
// error (an inline schema of it would be infinite), and so is a tag or a
// type the generator would misread (checkType); jsonschema tags follow the
// dialect described in tag.go.
func For(t reflect.Type) (json.RawMessage, error) {
	b, err := reflectType(t)
	if err != nil {
		return nil, err
	}
	// invopop writes `true` for fields of type any; the 2025-11-25 schema
	// wants every property to be an object schema. {} means the same.
	if !bytes.Contains(b, []byte("true")) && !bytes.Contains(b, []byte("false")) {
		return b, nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return json.Marshal(objectSubschemas(v, false))
}

// reflectType checks t (checkType) and returns the schema invopop
// reflects from it, with the bare descriptions of the tag dialect.
func reflectType(t reflect.Type) ([]byte, error) {
	if err := checkType(t); err != nil {
		return nil, err
	}
	r := &jsonschema.Reflector{
		Anonymous:      true,
		DoNotReference: true,
		ExpandedStruct: true,
	}
	s := r.ReflectFromType(t)
	if err := applyTagDescriptions(t, s); err != nil {
		return nil, err
	}
	s.Version = ""
	s.ID = ""
	return json.Marshal(s)
}

// objectSubschemas replaces boolean subschemas by their object forms (true:
// {}, false: {"not":{}}), except additionalProperties: false, which every
// revision accepts.
func objectSubschemas(v any, isSchema bool) any {
	switch x := v.(type) {
	case bool:
		if !isSchema {
			return x
		}
		if x {
			return map[string]any{}
		}
		return map[string]any{"not": map[string]any{}}
	case []any:
		for i, e := range x {
			x[i] = objectSubschemas(e, isSchema)
		}
		return x
	case map[string]any:
		for k, e := range x {
			switch k {
			case "properties", "$defs", "definitions", "patternProperties", "dependentSchemas":
				if m, ok := e.(map[string]any); ok {
					for pk, pv := range m {
						m[pk] = objectSubschemas(pv, true)
					}
				}
			case "additionalProperties":
				if b, ok := e.(bool); !ok || b {
					x[k] = objectSubschemas(e, true)
				}
			case "items", "contains", "not", "if", "then", "else", "propertyNames", "unevaluatedItems", "unevaluatedProperties":
				x[k] = objectSubschemas(e, true)
			case "allOf", "anyOf", "oneOf", "prefixItems":
				x[k] = objectSubschemas(e, true)
			}
		}
		return x
	}
	return v
}

// Normalize turns a schema given as any JSON value (json.RawMessage,
// []byte, string, map, *jsonschema.Schema, struct) into compact JSON.
func Normalize(v any) (json.RawMessage, error) {
	var raw []byte
	switch s := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		raw = s
	case []byte:
		raw = s
	case string:
		raw = []byte(s)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	return buf.Bytes(), nil
}

// RootType returns the "type" keyword of a schema's root, or "".
func RootType(raw json.RawMessage) string {
	var s struct {
		Type any `json:"type"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	if t, ok := s.Type.(string); ok {
		return t
	}
	return ""
}

// AcceptsAnything reports whether a compact schema is one that every JSON
// value satisfies and that describes nothing: true or {}. invopop derives it
// for json.RawMessage and other types without a shape of their own.
func AcceptsAnything(raw json.RawMessage) bool {
	s := string(bytes.TrimSpace(raw))
	return s == "true" || s == "{}"
}
