package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
	"github.com/mcpfn/mcpfn/mcp"
)

// ToolsPage is one page of tools/list as the client keeps it: the result
// (tools the client dropped left out), and the entry of each tool as the
// server sent it, Raw[i] for Tools[i]. Schemas stay raw JSON
// (mcp.Tool.InputSchema is a json.RawMessage): no keyword is dropped and
// no $ref is fetched.
type ToolsPage struct {
	mcp.ListToolsResult
	Raw []json.RawMessage `json:"-"`
}

// ListToolsPage fetches one page of tools/list (cursor nil: the first;
// NextCursor nil: the last page, "" is a cursor like any other). In
// 2026-07-28, tools whose x-mcp-header declarations are invalid are left
// out (and logged as a warning).
func (c *Conn) ListToolsPage(ctx context.Context, cursor *string, opts *CallOptions) (*ToolsPage, error) {
	page, err := c.listToolsPage(ctx, cursor, opts.resolve())
	if err != nil {
		return nil, err
	}
	out := *page
	out.Tools = append([]*mcp.Tool(nil), page.Tools...)
	out.Raw = append([]json.RawMessage(nil), page.Raw...)
	return &out, nil
}

// listToolsPage returns a page shared with the memo: callers copy what
// they hand out.
func (c *Conn) listToolsPage(ctx context.Context, cursor *string, co *callOptions) (*ToolsPage, error) {
	p, target := cursorParams(cursor)
	res, err := c.do(ctx, &request{method: "tools/list", params: p, co: co, cacheable: true, target: target})
	if err != nil {
		return nil, err
	}
	// A page served from the cache is the same byte slice as last time:
	// reuse its decoding (the page decoded last is looked at first,
	// without the lock).
	if m := c.lastPage.Load(); m != nil && m.target == target && m.decodes(res) {
		return m.page, nil
	}
	c.mu.Lock()
	m := c.toolsMemo[target]
	c.mu.Unlock()
	if m != nil && m.decodes(res) {
		c.lastPage.Store(m)
		return m.page, nil
	}
	w, err := decodeToolsPage(res)
	if err != nil {
		return nil, protocolError("tools/list result: %v", err)
	}
	out := &ToolsPage{ListToolsResult: mcp.ListToolsResult{NextCursor: w.NextCursor, TTLMs: w.TTLMs, CacheScope: w.CacheScope, Meta: w.Meta,
		Tools: make([]*mcp.Tool, 0, len(w.Tools))}, Raw: make([]json.RawMessage, 0, len(w.Tools))}
	for _, raw := range w.Tools {
		t := &mcp.Tool{}
		if err := t.UnmarshalJSON(raw); err != nil {
			c.cl.log.Warn("mcp client: tool dropped: undecodable", "err", err)
			continue
		}
		if !c.era.keepTool(t) {
			continue
		}
		out.Tools = append(out.Tools, t)
		out.Raw = append(out.Raw, raw)
	}
	c.mu.Lock()
	if c.toolsMemo == nil || len(c.toolsMemo) > 64 {
		c.toolsMemo = map[string]*toolsMemo{}
	}
	m = &toolsMemo{target: target, raw: res, page: out}
	c.toolsMemo[target] = m
	c.mu.Unlock()
	c.lastPage.Store(m)
	return out, nil
}

// toolsPageWire is a tools/list result as the client reads it: the tools'
// entries raw, each decoded (or dropped) on its own, and the page's cache
// hint and _meta.
type toolsPageWire struct {
	Tools      []json.RawMessage
	NextCursor *string
	TTLMs      *int64
	CacheScope mcp.CacheScope
	Meta       mcp.Meta
}

// decodeToolsPage decodes a tools/list result. tools and nextCursor are
// decoded as encoding/json decodes them (a malformed one fails the page);
// ttlMs, cacheScope and _meta are read leniently, as the cache reads them
// (a fractional ttlMs is truncated, a member of the wrong type is left
// out), so that a server's odd hint never costs its tools. The usual shape
// is read without reflection (the tools' entries are sub-slices of res,
// which the memo and the cache keep, not copies); anything
// jsonwire.EachKnownMember or a member's value leaves in doubt is decoded
// by encoding/json.
func decodeToolsPage(res json.RawMessage) (toolsPageWire, error) {
	var w toolsPageWire
	// The members read, in the order of the cases below and of hint's.
	members := [...]string{"tools", "nextCursor", "ttlMs", "cacheScope", "_meta"}
	ok := json.Valid(res) && jsonwire.EachKnownMember(res, members[:], false, func(i int, v []byte) bool {
		if i >= 2 {
			w.hint(i, v)
			return true
		}
		if jsonwire.IsNull(v) {
			return true
		}
		if i == 0 {
			if v[0] != '[' {
				return false
			}
			w.Tools = make([]json.RawMessage, 0, 4)
			jsonwire.EachElement(v, func(e []byte) { w.Tools = append(w.Tools, e) })
			return true
		}
		s, ok := jsonwire.RawString(v)
		if !ok || !utf8.ValidString(s) {
			return false
		}
		w.NextCursor = &s
		return true
	})
	if ok {
		return w, nil
	}
	return decodeToolsPageSlow(res)
}

// decodeToolsPageSlow is decodeToolsPage by encoding/json's rules.
func decodeToolsPageSlow(res json.RawMessage) (toolsPageWire, error) {
	var slow struct {
		Tools      []json.RawMessage `json:"tools"`
		NextCursor *string           `json:"nextCursor"`
		TTLMs      json.RawMessage   `json:"ttlMs"`
		CacheScope json.RawMessage   `json:"cacheScope"`
		Meta       json.RawMessage   `json:"_meta"`
	}
	if err := json.Unmarshal(res, &slow); err != nil {
		return toolsPageWire{}, err
	}
	w := toolsPageWire{Tools: slow.Tools, NextCursor: slow.NextCursor}
	for i, v := range [...]json.RawMessage{2: slow.TTLMs, 3: slow.CacheScope, 4: slow.Meta} {
		if len(v) > 0 {
			w.hint(i, v)
		}
	}
	return w, nil
}

// hint reads member i of decodeToolsPage's members (2: ttlMs, 3:
// cacheScope, 4: _meta) leniently from its raw value v.
func (w *toolsPageWire) hint(i int, v []byte) {
	switch i {
	case 2:
		if f, err := strconv.ParseFloat(string(v), 64); err == nil && !math.IsInf(f, 0) && math.Abs(f) < 1<<62 {
			n := int64(f)
			w.TTLMs = &n
		}
	case 3:
		switch string(v) {
		case `"public"`:
			w.CacheScope = mcp.CacheScopePublic
		case `"private"`:
			w.CacheScope = mcp.CacheScopePrivate
		default:
			if s, ok := jsonwire.RawString(v); ok {
				w.CacheScope = mcp.CacheScope(s)
			}
		}
	case 4:
		var m mcp.Meta
		if jsonwire.IsObject(v) && m.UnmarshalJSON(v) == nil {
			w.Meta = m
		}
	}
}

// toolsMemo is the decoding of a tools/list page, never modified.
type toolsMemo struct {
	target string // the page's cache target
	raw    json.RawMessage
	page   *ToolsPage
}

// decodes reports whether m is the decoding of res: the same bytes, not
// merely equal ones (the cache hands out the slice it stored).
func (m *toolsMemo) decodes(res json.RawMessage) bool {
	return len(res) > 0 && len(m.raw) == len(res) && &m.raw[0] == &res[0]
}

// maxPages bounds the pages one List* call follows.
const maxPages = 1000

// ListTools returns every tool, following nextCursor across all pages.
// The tools' entries as received are on the pages (ListToolsPage).
func (c *Conn) ListTools(ctx context.Context, opts *CallOptions) ([]*mcp.Tool, error) {
	return c.listTools(ctx, opts.resolve())
}

func (c *Conn) listTools(ctx context.Context, co *callOptions) ([]*mcp.Tool, error) {
	var all []*mcp.Tool
	var cursor *string
	for range maxPages {
		page, err := c.listToolsPage(ctx, cursor, co)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Tools...) // a copy: the page is shared
		if page.NextCursor == nil {
			return all, nil
		}
		cursor = page.NextCursor
	}
	return nil, fmt.Errorf("mcp client: tools/list: more than %d pages", maxPages)
}

// decodeCallToolResult decodes a tools/call result the client received
// (valid JSON: its message was decoded). Content blocks of types package
// mcp does not model are left out; CallOptions.RawResult keeps them.
func decodeCallToolResult(res json.RawMessage) (*mcp.CallToolResult, error) {
	r := &mcp.CallToolResult{}
	if err := r.UnmarshalJSON(res); err != nil {
		return nil, protocolError("tools/call result: %v", err)
	}
	return r, nil
}

// toolRequest builds the tools/call of a call to the tool name with args
// (nil, a JSON object as json.RawMessage or []byte, or a value that
// marshals to one).
func toolRequest(name string, args any, co *callOptions) (request, error) {
	p, err := toolParams(name, args)
	if err != nil {
		return request{}, err
	}
	return request{method: "tools/call", params: p, co: co, toolCall: true, tool: name}, nil
}

// toolParams builds the params of a tools/call: its name, and its
// arguments raw (left out when absent or null).
func toolParams(name string, args any) (params, error) {
	var raw json.RawMessage
	switch a := args.(type) {
	case nil:
	case json.RawMessage:
		raw = a
	case []byte:
		raw = a
	default:
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("mcp client: arguments: %w", err)
		}
		raw = b
	}
	if len(raw) > 0 && string(raw) == "null" {
		raw = nil
	}
	if len(raw) > 0 {
		if err := checkObject(raw); err != nil {
			return nil, err
		}
	}
	p := params{{"name", quoteJSON(name)}}
	if raw != nil {
		p = append(p, field{"arguments", raw})
	}
	return p, nil
}

// errNotObject: tool arguments must be a JSON object.
var errNotObject = errors.New("mcp client: tool arguments must be a JSON object")

func checkObject(raw json.RawMessage) error {
	for _, b := range raw {
		switch b {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			if !json.Valid(raw) {
				return fmt.Errorf("mcp client: arguments are not valid JSON")
			}
			return nil
		}
		return errNotObject
	}
	return errNotObject
}

// CallTool calls a tool and runs its input rounds (2026-07-28) with the
// configured handlers; in legacy sessions server requests are answered the
// same way (each such request counts as a round of Options.MaxRounds). In
// 2026-07-28 the arguments named by the tool's x-mcp-header declarations
// are mirrored into Mcp-Param-* headers: declarations come from tools/list,
// which is read first (through the cache, at most 32 pages, stopping at the
// tool's page) when the tool was never listed; a tool the list does not
// name is called without them. After a -32020 the tool list is refreshed
// and the call sent once more. With Options.Tasks a server may answer with
// a task: CallTool then waits for it (TaskHandle.Wait) and returns its
// outcome, and cancels it (tasks/cancel, best effort, within
// TaskCancelTimeout) when ctx ends or the wait fails before the task does.
func (c *Conn) CallTool(ctx context.Context, name string, args any, opts *CallOptions) (*mcp.CallToolResult, error) {
	if c.isClosed() {
		return nil, ErrClosed
	}
	r, err := toolRequest(name, args, opts.resolve())
	if err != nil {
		return nil, err
	}
	res, err := c.do(ctx, &r)
	if err != nil {
		return nil, err
	}
	if c.isTask(res) {
		return c.waitTool(ctx, res, r.co)
	}
	return decodeCallToolResult(res)
}

// CallToolOnce sends one round of a tools/call. If the server needs input,
// it returns a Continuation to answer later (Answer, with the handlers, or
// Resume, with answers given); no other call carries its state. On a
// legacy connection it is CallTool. A task (Options.Tasks) is waited for
// as CallTool waits for it.
func (c *Conn) CallToolOnce(ctx context.Context, name string, args any, opts *CallOptions) (*mcp.CallToolResult, *Continuation, error) {
	if c.isClosed() {
		return nil, nil, ErrClosed
	}
	r, err := toolRequest(name, args, opts.resolve())
	if err != nil {
		return nil, nil, err
	}
	res, k, err := c.era.callOnce(ctx, r)
	if err != nil || k != nil {
		return nil, k, err
	}
	if c.isTask(res) {
		tr, err := c.waitTool(ctx, res, r.co)
		return tr, nil, err
	}
	tr, err := decodeCallToolResult(res)
	if err == nil {
		r.co.keepRaw(res)
	}
	return tr, nil, err
}
