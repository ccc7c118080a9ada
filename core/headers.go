package core

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/textproto"
	"sort"
	"strings"
	"unicode/utf8"
)

// HTTP header names of the Streamable HTTP transport.
const (
	HeaderProtocolVersion = "MCP-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	HeaderSessionID       = "Mcp-Session-Id"
	// HeaderParamPrefix starts the headers that mirror tool arguments
	// declared with x-mcp-header.
	HeaderParamPrefix = "Mcp-Param-"
)

// Canonical forms of the header names, as net/http stores them.
var (
	canonProtocolVersion = canonicalHeader(HeaderProtocolVersion)
	canonMethod          = canonicalHeader(HeaderMethod)
	canonName            = canonicalHeader(HeaderName)
)

const (
	b64Prefix = "=?base64?"
	b64Suffix = "?="
)

// headerValue returns the single value of a header, whether it was present, and
// whether it was sent more than once (which makes it invalid for MCP's
// mirrored headers).
func headerValue(h http.Header, canonicalName string) (v string, present, repeated bool) {
	vs := h[canonicalName]
	switch len(vs) {
	case 0:
		return "", false, false
	case 1:
		return vs[0], true, false
	}
	return vs[0], true, true
}

// decodeHeaderValue decodes a mirrored header value: the Base64 sentinel form
// =?base64?...?= (standard alphabet with padding) or a plain value of
// visible ASCII and spaces. ok is false when the value is malformed or holds
// bytes a plain header value may not carry.
func decodeHeaderValue(v string) (string, bool) {
	if strings.HasPrefix(v, b64Prefix) && strings.HasSuffix(v, b64Suffix) && len(v) >= len(b64Prefix)+len(b64Suffix) {
		enc := v[len(b64Prefix) : len(v)-len(b64Suffix)]
		// Strict: the standard alphabet with padding, as SEP-2243's test
		// cases require (missing padding is malformed).
		dec, err := base64.StdEncoding.Strict().DecodeString(enc)
		if err != nil {
			return "", false
		}
		if !utf8.Valid(dec) {
			return "", false
		}
		return string(dec), true
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < 0x20 || c >= 0x7f {
			return "", false
		}
	}
	return v, true
}

// encodeHeaderValue is the client side of decodeHeaderValue: plain when safe,
// the Base64 sentinel form otherwise.
func encodeHeaderValue(v string) string {
	safe := v == strings.TrimSpace(v) && !(strings.HasPrefix(v, b64Prefix) && strings.HasSuffix(v, b64Suffix))
	for i := 0; safe && i < len(v); i++ {
		if v[i] < 0x20 || v[i] >= 0x7f {
			safe = false
		}
	}
	if safe {
		return v
	}
	return b64Prefix + base64.StdEncoding.EncodeToString([]byte(v)) + b64Suffix
}

// EncodeHeaderValue encodes a value for Mcp-Name or an Mcp-Param-* header as
// clients must: as is when it is plain visible ASCII without surrounding
// spaces, otherwise in the =?base64?...?= form.
func EncodeHeaderValue(v string) string { return encodeHeaderValue(v) }

// isToken reports whether s is an RFC 9110 token (1*tchar).
func isToken(s string) bool {
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

func headerMismatch(format string) *Error {
	return &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + format, status: http.StatusBadRequest}
}

func canonicalHeader(name string) string { return textproto.CanonicalMIMEHeaderKey(name) }

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
			keys := sortedKeys(n)
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
