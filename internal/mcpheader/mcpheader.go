// Package mcpheader finds the x-mcp-header declarations of a tool's input
// schema (2026-07-28 basic/transports/streamable-http, "Custom Headers from
// Tool Parameters"; server/tools, x-mcp-header): the server checks them at
// registration and against every call's Mcp-Param-* headers, the client
// mirrors arguments into those headers. Both sides read the declarations
// with Find, so they agree on what is valid.
package mcpheader

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Keyword is the schema keyword that names a header.
const Keyword = "x-mcp-header"

// Decl is one valid declaration.
type Decl struct {
	// Name is the header suffix as declared (Mcp-Param-{Name}).
	Name string
	// Path holds the property names from the schema root to the property.
	Path []string
	// Type is the property's type: "string", "integer" or "boolean".
	Type string
}

// valueKeywords hold instance values, not schemas: an x-mcp-header member
// inside them declares nothing.
var valueKeywords = map[string]bool{"enum": true, "const": true, "default": true, "examples": true}

// Find returns the declarations of schema in a stable order (a walk with
// sorted keys). A declaration is invalid, and Find returns an error naming
// it, when its value is not an RFC 9110 token, it is not reachable from the
// root through "properties" alone, its property's type is not string,
// integer or boolean, or it repeats another name case-insensitively.
func Find(schema []byte) ([]Decl, error) {
	if !bytes.Contains(schema, []byte(Keyword)) {
		return nil, nil
	}
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, err
	}
	var out []Decl
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
			if h, ok := n[Keyword]; ok {
				where := "/" + strings.Join(path, "/")
				name, isStr := h.(string)
				switch {
				case !isStr || !IsToken(name):
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
				out = append(out, Decl{Name: name, Path: append([]string(nil), path...), Type: t})
			}
			for _, k := range sortedKeys(n) {
				v := n[k]
				switch {
				case k == "properties":
					props, ok := v.(map[string]any)
					if !ok {
						continue
					}
					for _, name := range sortedKeys(props) {
						if err := walk(props[name], append(path[:len(path):len(path)], name), reachable); err != nil {
							return err
						}
					}
				case valueKeywords[k]:
				default:
					if err := walk(v, append(path[:len(path):len(path)], k), false); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	if err := walk(root, nil, true); err != nil {
		return nil, err
	}
	return out, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Lookup returns the value at path in a decoded JSON value, and whether it
// is there.
func Lookup(v any, path []string) (any, bool) {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[p]; !ok {
			return nil, false
		}
	}
	return v, true
}

// IsToken reports whether s is an RFC 9110 token (1*tchar).
func IsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
