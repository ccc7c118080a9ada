package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/mcpfn/mcpfn/core"
)

// x-mcp-header (2026-07-28 basic/transports/streamable-http §Custom Headers
// from Tool Parameters; server/tools §x-mcp-header): a property of a tool's
// inputSchema may name a header; the client mirrors the argument's value
// into Mcp-Param-{Name}.

const xMCPHeader = "x-mcp-header"

// maxSafeInteger is 2^53-1: integers beyond ±maxSafeInteger cannot be
// mirrored.
const maxSafeInteger = 1<<53 - 1

type headerDecl struct {
	name string   // the header suffix, as declared
	path []string // property names from the root
}

// toolHeaders holds a tool's valid declarations.
type toolHeaders struct {
	decls []headerDecl
}

// parseToolHeaders validates a tool's x-mcp-header declarations. An error
// means the tool definition is invalid and the client must drop the tool.
func parseToolHeaders(inputSchema json.RawMessage) (*toolHeaders, error) {
	if !bytes.Contains(inputSchema, []byte(xMCPHeader)) {
		return &toolHeaders{}, nil // fast path: nothing declared
	}
	dec := json.NewDecoder(bytes.NewReader(inputSchema))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("inputSchema: %v", err)
	}
	th := &toolHeaders{}
	seen := map[string]bool{}
	var walk func(node any, path []string, viaProps bool) error
	walk = func(node any, path []string, viaProps bool) error {
		switch n := node.(type) {
		case []any:
			for _, e := range n {
				if err := walk(e, path, false); err != nil {
					return err
				}
			}
		case map[string]any:
			for k, v := range n {
				switch k {
				case xMCPHeader:
					if !viaProps || len(path) == 0 {
						return fmt.Errorf("%s at %s is not reachable through properties", xMCPHeader, where(path))
					}
					name, ok := v.(string)
					if !ok || name == "" {
						return fmt.Errorf("%s at %s is empty or not a string", xMCPHeader, where(path))
					}
					if !isTokenString(name) {
						return fmt.Errorf("%s %q at %s has characters a header name may not have", xMCPHeader, name, where(path))
					}
					if !primitiveType(n["type"]) {
						return fmt.Errorf("%s %q at %s is not on a string, integer or boolean property", xMCPHeader, name, where(path))
					}
					low := strings.ToLower(name)
					if seen[low] {
						return fmt.Errorf("%s %q is declared twice", xMCPHeader, name)
					}
					seen[low] = true
					th.decls = append(th.decls, headerDecl{name: name, path: append([]string(nil), path...)})
				case "properties":
					props, ok := v.(map[string]any)
					if !ok {
						continue
					}
					for pname, sub := range props {
						if err := walk(sub, append(path[:len(path):len(path)], pname), viaProps); err != nil {
							return err
						}
					}
				case "enum", "const", "default", "examples":
					// Values, not schemas.
				default:
					if err := walk(v, path, false); err != nil {
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
	return th, nil
}

func where(path []string) string {
	if len(path) == 0 {
		return "the schema root"
	}
	return "/" + strings.Join(path, "/")
}

func isTokenString(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isTchar(s[i]) {
			return false
		}
	}
	return s != ""
}

// primitiveType: the property's type is string, integer or boolean.
func primitiveType(t any) bool {
	s, ok := t.(string)
	return ok && (s == "string" || s == "integer" || s == "boolean")
}

// errHeaderValue: an argument cannot be mirrored into its header.
var errHeaderValue = errors.New("mcp client: argument cannot be sent as a header")

// paramHeaders computes the Mcp-Param-* headers of a call. A value absent or
// null sends no header; a string is encoded as core.EncodeHeaderValue does,
// an integer in decimal, a boolean as true/false.
func (th *toolHeaders) paramHeaders(args json.RawMessage) ([][2]string, error) {
	if th == nil || len(th.decls) == 0 || len(args) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, err
	}
	var out [][2]string
	for _, d := range th.decls {
		v, ok := lookup(root, d.path)
		if !ok || v == nil {
			continue
		}
		var s string
		switch x := v.(type) {
		case string:
			s = core.EncodeHeaderValue(x)
		case bool:
			s = "false"
			if x {
				s = "true"
			}
		case json.Number:
			f, _, err := big.ParseFloat(string(x), 10, 200, big.ToNearestEven)
			if err != nil || !f.IsInt() {
				return nil, fmt.Errorf("%w: %s is not an integer", errHeaderValue, where(d.path))
			}
			n, _ := f.Int(nil)
			if n.CmpAbs(big.NewInt(maxSafeInteger)) > 0 {
				return nil, fmt.Errorf("%w: %s is beyond ±(2^53-1)", errHeaderValue, where(d.path))
			}
			s = n.String()
		default:
			return nil, fmt.Errorf("%w: %s is not a string, integer or boolean", errHeaderValue, where(d.path))
		}
		out = append(out, [2]string{core.HeaderParamPrefix + d.name, s})
	}
	return out, nil
}

func lookup(root any, path []string) (any, bool) {
	v := root
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
