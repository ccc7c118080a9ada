package core

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/textproto"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mcpfn/mcpfn/internal/mcpheader"
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
func isToken(s string) bool { return mcpheader.IsToken(s) }

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
// (internal/mcpheader, which the client shares) and returns them sorted by
// header name.
func findHeaderParams(raw json.RawMessage) ([]headerParam, error) {
	decls, err := mcpheader.Find(raw)
	if err != nil || len(decls) == 0 {
		return nil, err
	}
	out := make([]headerParam, len(decls))
	for i, d := range decls {
		out[i] = headerParam{name: d.Name, canon: canonicalHeader(HeaderParamPrefix + d.Name), path: d.Path, schema: d.Type}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].canon < out[j].canon })
	return out, nil
}
