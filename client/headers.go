package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/mcpfn/mcpfn/internal/mcpheader"
	"github.com/mcpfn/mcpfn/mcp"
)

// x-mcp-header (2026-07-28 basic/transports/streamable-http §Custom Headers
// from Tool Parameters; server/tools §x-mcp-header): a property of a tool's
// inputSchema may name a header; the client mirrors the argument's value
// into Mcp-Param-{Name}.

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

// parseToolHeaders validates a tool's x-mcp-header declarations with the
// same rules the server applies at registration (internal/mcpheader). An
// error means the tool definition is invalid and the client must drop the
// tool.
func parseToolHeaders(inputSchema json.RawMessage) (*toolHeaders, error) {
	decls, err := mcpheader.Find(inputSchema)
	if err != nil {
		return nil, fmt.Errorf("inputSchema: %v", err)
	}
	th := &toolHeaders{decls: make([]headerDecl, len(decls))}
	for i, d := range decls {
		th.decls[i] = headerDecl{name: d.Name, path: d.Path}
	}
	return th, nil
}

func where(path []string) string {
	if len(path) == 0 {
		return "the schema root"
	}
	return "/" + strings.Join(path, "/")
}

// errHeaderValue: an argument cannot be mirrored into its header.
var errHeaderValue = errors.New("mcp client: argument cannot be sent as a header")

// paramHeaders computes the Mcp-Param-* headers of a call. A value absent or
// null sends no header; a string is encoded as mcp.EncodeHeaderValue does,
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
		v, ok := mcpheader.Lookup(root, d.path)
		if !ok || v == nil {
			continue
		}
		var s string
		switch x := v.(type) {
		case string:
			s = mcp.EncodeHeaderValue(x)
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
		out = append(out, [2]string{mcp.HeaderParamPrefix + d.name, s})
	}
	return out, nil
}
