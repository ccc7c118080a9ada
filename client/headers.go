package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"sync"

	"github.com/mcpfn/mcpfn/internal/mcpheader"
	"github.com/mcpfn/mcpfn/mcp"
)

// x-mcp-header (2026-07-28 basic/transports/streamable-http §Custom Headers
// from Tool Parameters; server/tools §x-mcp-header): a property of a tool's
// inputSchema may name a header; the client mirrors the argument's value
// into Mcp-Param-{Name}. A 2026-07-28 feature: the modern protocol learns
// the declarations from tools/list and sends the headers.

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

// Bounds of the tools/list walk that looks for a tool's declarations.
const (
	// maxHeaderPages bounds the pages one walk reads.
	maxHeaderPages = 32
	// maxHeaderBytes bounds the tool definitions one walk reads (the sum
	// of their sizes), so that a server with huge pages cannot make a call
	// read 32 of Options.MaxResponseBytes.
	maxHeaderBytes = 8 << 20
	// maxUnlisted bounds the names remembered as not found.
	maxUnlisted = 256
)

// declarations are the x-mcp-header declarations a 2026-07-28 Conn learnt
// from tools/list, by tool name, and the tools a walk did not find. Safe
// for concurrent use.
type declarations struct {
	mu       sync.Mutex
	headers  map[string]*toolHeaders // x-mcp-header declarations by tool name
	unlisted map[string]struct{}     // tools a declaration walk did not find
	learnSem chan struct{}           // one declaration walk at a time
	// maxBytes is maxHeaderBytes (tests lower it).
	maxBytes int
}

func (d *declarations) init() {
	d.headers, d.learnSem, d.maxBytes = map[string]*toolHeaders{}, make(chan struct{}, 1), maxHeaderBytes
}

// learn records the declarations of tool.
func (d *declarations) learn(tool string, th *toolHeaders) {
	d.mu.Lock()
	d.headers[tool] = th
	d.mu.Unlock()
}

// drop forgets tool (its declarations are invalid: the tool is dropped).
func (d *declarations) drop(tool string) {
	d.mu.Lock()
	delete(d.headers, tool)
	d.mu.Unlock()
}

// known reports whether the declarations of tool are known: learnt from
// tools/list, or looked for there in vain.
func (d *declarations) known(tool string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, known := d.headers[tool]
	if !known {
		_, known = d.unlisted[tool]
	}
	return known
}

// notFound remembers (bounded) that a walk did not find tool.
func (d *declarations) notFound(tool string) {
	d.mu.Lock()
	if d.unlisted == nil || len(d.unlisted) >= maxUnlisted {
		d.unlisted = map[string]struct{}{}
	}
	d.unlisted[tool] = struct{}{}
	d.mu.Unlock()
}

// forgetUnlisted forgets the tools earlier walks did not find: the list
// changed.
func (d *declarations) forgetUnlisted() {
	d.mu.Lock()
	d.unlisted = nil
	d.mu.Unlock()
}

// paramHeaders returns the Mcp-Param-* headers of a call to tool with the
// raw arguments args (nil when the tool declares none) and whether its
// declarations are known.
func (d *declarations) paramHeaders(tool string, args json.RawMessage) (http.Header, bool, error) {
	d.mu.Lock()
	th, known := d.headers[tool]
	if !known {
		_, known = d.unlisted[tool]
	}
	d.mu.Unlock()
	if th == nil {
		return nil, known, nil
	}
	ph, err := th.paramHeaders(args)
	if err != nil || len(ph) == 0 {
		return nil, true, err
	}
	h := make(http.Header, len(ph))
	for _, kv := range ph {
		h[http.CanonicalHeaderKey(kv[0])] = []string{kv[1]}
	}
	return h, true, nil
}

// learnHeaders reads tools/list pages, through the cache and with the
// call's credential, until one names the tool, the list ends, or
// maxHeaderPages pages or maxHeaderBytes of tool definitions were read. A
// tool it did not find is remembered (bounded) until the tool list changes
// (notifications/tools/list_changed, -32020), so the walk is not repeated
// for every call; its calls go without Mcp-Param-* headers. Walks run one
// at a time: concurrent first calls wait for one walk instead of each
// reading the list. A failed list is logged and the call sent without
// headers; only ctx ending fails the call.
func (p *modernEra) learnHeaders(ctx context.Context, name string, co *callOptions) error {
	d := &p.decls
	select {
	case d.learnSem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-d.learnSem }()
	if d.known(name) {
		return nil // another walk settled it
	}
	lo := co.credentialOnly(CacheDefault)
	var cursor *string
	read := 0
	for range maxHeaderPages {
		page, err := p.c.listToolsPage(ctx, cursor, lo)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			p.c.cl.log.WarnContext(ctx, "mcp client: tools/list for x-mcp-header declarations failed; calling without Mcp-Param headers", "tool", name, "err", err)
			break
		}
		for _, t := range page.Tools {
			if t.Name == name {
				return nil
			}
		}
		for _, raw := range page.Raw {
			read += len(raw)
		}
		if page.NextCursor == nil || read > d.maxBytes {
			break
		}
		cursor = page.NextCursor
	}
	d.notFound(name)
	return nil
}
