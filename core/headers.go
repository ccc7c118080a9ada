package core

import (
	"encoding/json"
	"net/http"
	"net/textproto"
	"sort"

	"github.com/mcpfn/mcpfn/internal/mcpheader"
	"github.com/mcpfn/mcpfn/mcp"
)

// HTTP header names of the Streamable HTTP transport (see the mcp constants
// of the same names).
const (
	HeaderProtocolVersion = mcp.HeaderProtocolVersion
	HeaderMethod          = mcp.HeaderMethod
	HeaderName            = mcp.HeaderName
	HeaderSessionID       = mcp.HeaderSessionID
	// HeaderParamPrefix starts the headers that mirror tool arguments
	// declared with x-mcp-header.
	HeaderParamPrefix = mcp.HeaderParamPrefix
)

// EncodeHeaderValue encodes a value for Mcp-Name or an Mcp-Param-* header as
// clients must (mcp.EncodeHeaderValue).
func EncodeHeaderValue(v string) string { return mcp.EncodeHeaderValue(v) }

// isToken reports whether s is an RFC 9110 token (1*tchar).
func isToken(s string) bool { return mcpheader.IsToken(s) }

func headerMismatch(format string) *Error {
	return NewError(CodeHeaderMismatch, "Header mismatch: "+format).WithHTTP(http.StatusBadRequest, nil)
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
