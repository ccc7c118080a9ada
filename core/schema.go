package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"

	validator "github.com/google/jsonschema-go/jsonschema"
	"github.com/invopop/jsonschema"
)

// schemaFor derives the JSON Schema of t with invopop/jsonschema, configured so
// that the root is inline (no $ref, no $defs) and carries no $schema or $id.
// Reflection happens once per tool, at registration. A recursive type is an
// error (an inline schema of it would be infinite); jsonschema tags follow
// the dialect described in schematag.go.
func schemaFor(t reflect.Type) (json.RawMessage, error) {
	if err := checkNotRecursive(t); err != nil {
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
	b, err := json.Marshal(s)
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

// nullable makes a schema also accept null.
func nullable(raw json.RawMessage) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	switch t := m["type"].(type) {
	case string:
		m["type"] = []any{t, "null"}
	case []any:
		m["type"] = append(t, "null")
	default:
		return raw
	}
	b, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return b
}

// compiledSchema is a JSON Schema validator (2020-12, or draft-07 when the
// schema says so) with a fast path for the simple schemas most tools have.
// The full validator is resolved at registration for schemas a user wrote
// (so that a broken one is a registration error), and on first use for
// schemas derived from Go types, which are valid by construction: a cold
// start then pays only for the tools it calls with arguments the fast path
// cannot prove.
type compiledSchema struct {
	raw  json.RawMessage
	fast *fastSchema // nil when the schema has no fast path

	once sync.Once
	s    *validator.Resolved
	err  error
}

// provenValid reports whether the raw instance is valid by the fast path
// alone; false means the full validator must decide.
func (c *compiledSchema) provenValid(raw []byte) bool {
	return c.fast != nil && c.fast.valid(raw)
}

// resolve builds the full validator once.
func (c *compiledSchema) resolve() (*validator.Resolved, error) {
	c.once.Do(func() {
		var s validator.Schema
		if err := json.Unmarshal(c.raw, &s); err != nil {
			c.err = fmt.Errorf("invalid schema: %w", err)
			return
		}
		// No BaseURI loader: external references are never loaded (no
		// network and no file access; a $ref outside the schema is an
		// error).
		c.s, c.err = s.Resolve(&validator.ResolveOptions{BaseURI: "mem:///schema.json"})
		if c.err != nil {
			c.err = fmt.Errorf("invalid schema: %w", c.err)
		}
	})
	return c.s, c.err
}

// compileSchema prepares raw for validation; eager resolves the full
// validator now, so that an invalid schema is reported at once.
func compileSchema(raw json.RawMessage, eager bool) (*compiledSchema, error) {
	c := &compiledSchema{raw: raw, fast: compileFast(raw)}
	if eager {
		if _, err := c.resolve(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// decodeForValidation decodes JSON the way the validator needs it: integers
// that fit as int64 (exact), other numbers as float64.
func decodeForValidation(raw []byte) (any, error) {
	v, err := decodeNumbers(raw)
	if err != nil {
		return nil, err
	}
	return numbersForValidation(v), nil
}

// decodeNumbers decodes one JSON value with numbers as json.Number.
func decodeNumbers(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

func numbersForValidation(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbersForValidation(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbersForValidation(e)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// validate reports why v does not satisfy the schema, phrased for a model to
// act on.
func (c *compiledSchema) validate(v any) error {
	r, err := c.resolve()
	if err != nil {
		return err
	}
	err = r.Validate(v)
	if err == nil {
		return nil
	}
	// "validating root: validating /properties/a: type: ..." becomes
	// "at '/a': type: ...".
	msg := strings.ReplaceAll(err.Error(), "validating root: ", "")
	msg = schemaPathRE.ReplaceAllStringFunc(msg, func(m string) string {
		p := strings.TrimSuffix(strings.TrimPrefix(m, "validating "), ": ")
		p = strings.ReplaceAll(p, "/properties/", "/")
		return "at '" + p + "': "
	})
	return errors.New(msg)
}

var schemaPathRE = regexp.MustCompile(`validating (/[^:]*): `)

// normalizeSchema turns a schema given as any JSON value (json.RawMessage,
// []byte, string, map, *jsonschema.Schema, struct) into compact JSON.
func normalizeSchema(v any) (json.RawMessage, error) {
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

// schemaRootType returns the "type" keyword of a schema's root, or "".
func schemaRootType(raw json.RawMessage) string {
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

// headerParam is a tool argument mirrored into an Mcp-Param-{Name} header.
type headerParam struct {
	name   string   // as declared (x-mcp-header value)
	canon  string   // canonical HTTP header name
	path   []string // property path from the root
	schema string   // "string", "integer" or "boolean"
}

// findHeaderParams validates every x-mcp-header annotation of an input schema
// and returns them sorted by header name. A declaration is invalid when it is
// not an RFC 9110 token, duplicates another case-insensitively, sits on a type
// other than string, integer or boolean, or is not reachable from the root
// through "properties" alone.
func findHeaderParams(raw json.RawMessage) ([]headerParam, error) {
	if !bytes.Contains(raw, []byte("x-mcp-header")) {
		return nil, nil
	}
	var root any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, err
	}
	var out []headerParam
	seen := map[string]string{}
	var walk func(node any, path []string, reachable bool) error
	walk = func(node any, path []string, reachable bool) error {
		switch n := node.(type) {
		case []any:
			for _, e := range n {
				if err := walk(e, path, false); err != nil {
					return err
				}
			}
		case map[string]any:
			if h, ok := n["x-mcp-header"]; ok {
				where := "/" + strings.Join(path, "/")
				name, isStr := h.(string)
				switch {
				case !isStr || !isToken(name):
					return fmt.Errorf("x-mcp-header at %s: %v is not an HTTP token", where, h)
				case !reachable || len(path) == 0:
					return fmt.Errorf("x-mcp-header %q at %s: only properties reachable from the root through \"properties\" may be mirrored", name, where)
				}
				t, _ := n["type"].(string)
				if t != "string" && t != "integer" && t != "boolean" {
					return fmt.Errorf("x-mcp-header %q at %s: the property must have type string, integer or boolean, not %v", name, where, n["type"])
				}
				key := strings.ToLower(name)
				if prev, dup := seen[key]; dup {
					return fmt.Errorf("x-mcp-header %q at %s duplicates %q (header names are case-insensitive)", name, where, prev)
				}
				seen[key] = name
				p := append([]string(nil), path...)
				out = append(out, headerParam{name: name, canon: canonicalHeader(HeaderParamPrefix + name), path: p, schema: t})
			}
			keys := make([]string, 0, len(n))
			for k := range n {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				v := n[k]
				if k == "properties" {
					props, ok := v.(map[string]any)
					if !ok {
						continue
					}
					pk := make([]string, 0, len(props))
					for name := range props {
						pk = append(pk, name)
					}
					sort.Strings(pk)
					for _, name := range pk {
						if err := walk(props[name], append(path, name), reachable); err != nil {
							return err
						}
					}
					continue
				}
				if err := walk(v, append(path, k), false); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(root, nil, true); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].canon < out[j].canon })
	return out, nil
}
