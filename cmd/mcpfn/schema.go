package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// propertyOrder returns the names of a JSON Schema's properties in the
// order its JSON text has them: the order the server wrote the form in (a
// Go map loses it). It returns nil when schema is not an object with a
// properties object. The scan is jsonwire's, which package mcp uses too:
// the CLI links no JSON library but encoding/json (docs/design.md,
// "Module layout").
func propertyOrder(schema []byte) []string {
	var names []string
	jsonwire.EachMember(schema, func(key, value []byte) bool {
		if k, ok := jsonwire.KeyString(key); !ok || k != "properties" {
			return true
		}
		names = []string{}
		if jsonwire.EachMember(value, func(key, _ []byte) bool {
			k, ok := jsonwire.KeyString(key)
			names = append(names, k)
			return ok
		}) != nil {
			names = nil
		}
		return false
	})
	return names
}

// orderedNames returns the keys of props in the order of the schema's
// JSON text (propertyOrder), or sorted when that order cannot be read.
func orderedNames[V any](schema []byte, props map[string]V) []string {
	names := propertyOrder(schema)
	if len(names) == len(props) && !slices.ContainsFunc(names, func(n string) bool { _, ok := props[n]; return !ok }) {
		return names
	}
	names = names[:0]
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// jsonObjectError says why s, given on the command line as what, is not a
// JSON object: its syntax error, at its byte offset and shown in place, or
// the kind of JSON value it is instead. Nil when s is an object.
func jsonObjectError(what, s string) error {
	var obj map[string]json.RawMessage
	err := json.Unmarshal([]byte(s), &obj)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		if se.Offset >= int64(len(s)) && strings.Contains(se.Error(), "end of JSON input") {
			return fmt.Errorf("%s: invalid JSON: %v\n%s", what, se, pointAt(s, len(s)+1))
		}
		return fmt.Errorf("%s: invalid JSON at byte %d: %v\n%s", what, se.Offset, se, pointAt(s, int(se.Offset)))
	}
	if err == nil && obj != nil {
		return nil
	}
	var v any
	json.Unmarshal([]byte(s), &v)
	kind := "null"
	switch v.(type) {
	case []any:
		kind = "an array"
	case string:
		kind = "a string"
	case float64:
		kind = "a number"
	case bool:
		kind = "a boolean"
	}
	return fmt.Errorf(`%s must be a JSON object, such as {"name":"value"}, not %s`, what, kind)
}

// pointAt shows s on one line (cut to 40 characters before the error and
// 20 after) and a caret under the byte at offset: 1-based, the byte a JSON
// syntax error was found at, or one past the end for an unexpected end.
func pointAt(s string, offset int) string {
	offset = min(max(offset, 1), len(s)+1)
	before, after := []rune(s[:offset-1]), []rune(s[offset-1:])
	b, a := string(before), string(after)
	if len(before) > 40 {
		b = "…" + string(before[len(before)-39:])
	}
	if len(after) > 20 {
		a = string(after[:19]) + "…"
	}
	b, a = oneLine(b), oneLine(a)
	return "  " + b + a + "\n  " + strings.Repeat(" ", utf8.RuneCountInString(b)) + "^"
}
