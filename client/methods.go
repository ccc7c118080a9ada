package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
	"github.com/mcpfn/mcpfn/mcp"
)

// noOptions is the options of a call given none; it is never modified.
var noOptions callOptions

func callOpts(opts []CallOption) *callOptions {
	if len(opts) == 0 {
		return &noOptions
	}
	co := &callOptions{}
	for _, o := range opts {
		o(co)
	}
	return co
}

// do sends a request in the Conn's era, through the cache when the method
// is cacheable (modern only).
func (c *Conn) do(ctx context.Context, method string, p params, co *callOptions, extra http.Header, cacheable bool, target string) (json.RawMessage, error) {
	if c.isClosed() {
		return nil, ErrClosed
	}
	if !c.modern {
		res, err := c.callLegacy(ctx, method, p, co)
		if err == nil {
			co.keepRaw(res)
		}
		return res, err
	}
	// A call with its own credential neither reads nor stores entries: they
	// belong to the Conn's credential source.
	useCache := cacheable && c.cache != nil && co.cacheMode != CacheBypass && !co.hasAuth
	var src credSource
	var gen uint64
	if useCache {
		var err error
		if src, err = c.credential(ctx); err != nil {
			return nil, err
		}
		if co.cacheMode == CacheDefault {
			if r, ok := c.cache.get(method, target, src); ok {
				co.keepRaw(r)
				return r, nil
			}
		}
		gen = c.cache.generation()
	}
	var res json.RawMessage
	var err error
	rounds := 0
	if mrtrMethod(method) {
		res, rounds, err = c.callMRTR(ctx, method, p, co, extra)
	} else {
		var rt string
		res, rt, err = c.callModern(ctx, method, p, co, extra)
		if err == nil && rt != resultComplete {
			err = protocolError("%s answered %s", method, rt)
		}
	}
	if err != nil {
		c.invalidateOnError(method, target, err)
		if c.eraFromCache && legacyEvidence(err) {
			ForgetEra(c.url) // the next Connect probes again
		}
		return nil, err
	}
	// Never cache what answered inputResponses or requestState.
	if useCache && rounds == 0 {
		c.cache.put(method, target, src, gen, res)
	}
	co.keepRaw(res)
	return res, nil
}

// invalidateOnError drops cached pages a failure shows to be stale: all
// pages of a list whose cursor was rejected, and the tool list on -32020.
func (c *Conn) invalidateOnError(method, target string, err error) {
	var re *mcp.Error
	if !errors.As(err, &re) {
		return
	}
	if re.Code == mcp.CodeHeaderMismatch {
		c.forgetUnlisted()
	}
	if c.cache == nil {
		return
	}
	switch {
	case re.Code == mcp.CodeHeaderMismatch:
		c.cache.dropMethod("tools/list", "")
	case re.Code == mcp.CodeInvalidParams && target != "" && isList(method):
		c.cache.dropMethod(method, "")
	}
}

func isList(m string) bool {
	switch m {
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
		return true
	}
	return false
}

func cursorParams(cursor *string) (params, string) {
	if cursor == nil {
		return nil, ""
	}
	// "" is a real cursor: it is sent, and it is a cache key of its own.
	return params{{"cursor", quoteJSON(*cursor)}}, "c:" + *cursor
}

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
func (c *Conn) ListToolsPage(ctx context.Context, cursor *string, opts ...CallOption) (*ToolsPage, error) {
	page, err := c.listToolsPage(ctx, cursor, callOpts(opts))
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
	res, err := c.do(ctx, "tools/list", p, co, nil, true, target)
	if err != nil {
		return nil, err
	}
	// A page served from the cache is the same byte slice as last time:
	// reuse its decoding.
	c.mu.Lock()
	m := c.toolsMemo[target]
	c.mu.Unlock()
	if m != nil && len(res) > 0 && len(m.raw) == len(res) && &m.raw[0] == &res[0] {
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
			c.log.Warn("mcp client: tool dropped: undecodable", "err", err)
			continue
		}
		in, _ := t.InputSchema.(json.RawMessage)
		th, err := parseToolHeaders(in)
		if err != nil {
			if c.modern {
				c.log.Warn("mcp client: tool dropped: invalid x-mcp-header", "tool", t.Name, "reason", err.Error())
				c.mu.Lock()
				delete(c.headers, t.Name)
				c.mu.Unlock()
				continue
			}
			th = &toolHeaders{}
		}
		c.mu.Lock()
		c.headers[t.Name] = th
		c.mu.Unlock()
		out.Tools = append(out.Tools, t)
		out.Raw = append(out.Raw, raw)
	}
	c.mu.Lock()
	if c.toolsMemo == nil || len(c.toolsMemo) > 64 {
		c.toolsMemo = map[string]*toolsMemo{}
	}
	c.toolsMemo[target] = &toolsMemo{raw: res, page: out}
	c.mu.Unlock()
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

// toolsPageMembers are the members decodeToolsPage reads, in the order of
// its cases.
var toolsPageMembers = [...]string{"tools", "nextCursor", "ttlMs", "cacheScope", "_meta"}

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
	ok := json.Valid(res) && jsonwire.EachKnownMember(res, toolsPageMembers[:], false, func(i int, v []byte) bool {
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

// hint reads member i of toolsPageMembers (ttlMs, cacheScope or _meta)
// leniently from its raw value v.
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
	raw  json.RawMessage
	page *ToolsPage
}

// maxPages bounds the pages one List* call follows.
const maxPages = 1000

// ListTools returns every tool, following nextCursor across all pages.
// The tools' entries as received are on the pages (ListToolsPage).
func (c *Conn) ListTools(ctx context.Context, opts ...CallOption) ([]*mcp.Tool, error) {
	return c.listTools(ctx, callOpts(opts))
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
// mcp does not model are left out; WithRawResult keeps them.
func decodeCallToolResult(res json.RawMessage) (*mcp.CallToolResult, error) {
	r := &mcp.CallToolResult{}
	if err := r.UnmarshalJSON(res); err != nil {
		return nil, protocolError("tools/call result: %v", err)
	}
	return r, nil
}

// toolParams builds the params of a tools/call and returns its arguments,
// raw.
func toolParams(name string, args any) (params, json.RawMessage, error) {
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
			return nil, nil, fmt.Errorf("mcp client: arguments: %w", err)
		}
		raw = b
	}
	if len(raw) > 0 && string(raw) == "null" {
		raw = nil
	}
	if len(raw) > 0 {
		if err := checkObject(raw); err != nil {
			return nil, nil, err
		}
	}
	p := params{{"name", quoteJSON(name)}}
	if raw != nil {
		p = append(p, field{"arguments", raw})
	}
	return p, raw, nil
}

// paramHeaders returns the Mcp-Param-* headers of a call to name (nil in
// legacy, or when the tool declares none) and whether its declarations are
// known: learnt from tools/list, or looked for there in vain.
func (c *Conn) paramHeaders(name string, raw json.RawMessage) (http.Header, bool, error) {
	if !c.modern {
		return nil, true, nil
	}
	c.mu.Lock()
	th, known := c.headers[name]
	if !known {
		_, known = c.unlisted[name]
	}
	c.mu.Unlock()
	if th == nil {
		return nil, known, nil
	}
	ph, err := th.paramHeaders(raw)
	if err != nil || len(ph) == 0 {
		return nil, true, err
	}
	h := make(http.Header, len(ph))
	for _, kv := range ph {
		h[http.CanonicalHeaderKey(kv[0])] = []string{kv[1]}
	}
	return h, true, nil
}

// toolCall builds the params and headers of a tools/call. When the tool's
// x-mcp-header declarations are unknown, it reads tools/list first
// (learnHeaders), since the client MUST send the headers (2026-07-28
// basic/transports/streamable-http §Custom Headers from Tool Parameters).
func (c *Conn) toolCall(ctx context.Context, name string, args any, co *callOptions) (params, http.Header, error) {
	p, raw, err := toolParams(name, args)
	if err != nil {
		return nil, nil, err
	}
	h, known, err := c.paramHeaders(name, raw)
	if err != nil || known {
		return p, h, err
	}
	if err := c.learnHeaders(ctx, name, co); err != nil {
		return nil, nil, err
	}
	h, _, err = c.paramHeaders(name, raw)
	return p, h, err
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

// learnHeaders reads tools/list pages, through the cache and with the
// call's credential, until one names the tool, the list ends, or
// maxHeaderPages pages or maxHeaderBytes of tool definitions were read. A tool it did not find is remembered (bounded)
// until the tool list changes (notifications/tools/list_changed, -32020), so
// the walk is not repeated for every call; its calls go without
// Mcp-Param-* headers. Walks run one at a time: concurrent first calls wait
// for one walk instead of each reading the list. A failed list is logged
// and the call sent without headers; only ctx ending fails the call.
func (c *Conn) learnHeaders(ctx context.Context, name string, co *callOptions) error {
	select {
	case c.learnSem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-c.learnSem }()
	c.mu.Lock()
	_, known := c.headers[name]
	if !known {
		_, known = c.unlisted[name]
	}
	c.mu.Unlock()
	if known {
		return nil // another walk settled it
	}
	lo := &callOptions{authz: co.authz, hasAuth: co.hasAuth, header: co.header}
	var cursor *string
	read := 0
	for range maxHeaderPages {
		page, err := c.listToolsPage(ctx, cursor, lo)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			c.log.WarnContext(ctx, "mcp client: tools/list for x-mcp-header declarations failed; calling without Mcp-Param headers", "tool", name, "err", err)
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
		if page.NextCursor == nil || read > c.maxHeaderBytes {
			break
		}
		cursor = page.NextCursor
	}
	c.mu.Lock()
	if c.unlisted == nil || len(c.unlisted) >= maxUnlisted {
		c.unlisted = map[string]struct{}{}
	}
	c.unlisted[name] = struct{}{}
	c.mu.Unlock()
	return nil
}

// forgetUnlisted forgets the tools earlier walks did not find: the list
// changed.
func (c *Conn) forgetUnlisted() {
	c.mu.Lock()
	c.unlisted = nil
	c.mu.Unlock()
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
// and the call sent once more.
func (c *Conn) CallTool(ctx context.Context, name string, args any, opts ...CallOption) (*mcp.CallToolResult, error) {
	if c.isClosed() {
		return nil, ErrClosed
	}
	co := callOpts(opts)
	p, h, err := c.toolCall(ctx, name, args, co)
	if err != nil {
		return nil, err
	}
	res, err := c.do(ctx, "tools/call", p, co, h, false, "")
	if err != nil && c.modern && errors.Is(err, mcp.ErrHeaderMismatch) {
		lo := &callOptions{authz: co.authz, hasAuth: co.hasAuth, header: co.header, cacheMode: CacheRefresh}
		if _, lerr := c.listTools(ctx, lo); lerr == nil {
			if p, h, err = c.toolCall(ctx, name, args, co); err != nil {
				return nil, err
			}
			res, err = c.do(ctx, "tools/call", p, co, h, false, "")
		}
	}
	if err != nil {
		return nil, err
	}
	return decodeCallToolResult(res)
}

// CallToolOnce sends one round of a tools/call. If the server needs input,
// it returns a Continuation to answer later (Answer, with the handlers, or
// Resume, with answers given); no other call carries its state. On a
// legacy connection it is CallTool.
func (c *Conn) CallToolOnce(ctx context.Context, name string, args any, opts ...CallOption) (*mcp.CallToolResult, *Continuation, error) {
	if !c.modern {
		r, err := c.CallTool(ctx, name, args, opts...)
		return r, nil, err
	}
	if c.isClosed() {
		return nil, nil, ErrClosed
	}
	co := callOpts(opts)
	p, h, err := c.toolCall(ctx, name, args, co)
	if err != nil {
		return nil, nil, err
	}
	res, k, err := c.callOnce(ctx, "tools/call", p, co, h, 0)
	if err != nil || k != nil {
		return nil, k, err
	}
	r, err := decodeCallToolResult(res)
	if err == nil {
		co.keepRaw(res)
	}
	return r, nil, err
}

// GetPrompt gets a prompt, running its input rounds like CallTool.
func (c *Conn) GetPrompt(ctx context.Context, name string, args map[string]string, opts ...CallOption) (*mcp.GetPromptResult, error) {
	p := params{{"name", quoteJSON(name)}}
	if args != nil {
		b, _ := json.Marshal(args)
		p = append(p, field{"arguments", b})
	}
	res, err := c.do(ctx, "prompts/get", p, callOpts(opts), nil, false, "")
	if err != nil {
		return nil, err
	}
	var r mcp.GetPromptResult
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, protocolError("prompts/get result: %v", err)
	}
	return &r, nil
}

// ReadResource reads a resource, running its input rounds like CallTool.
// Modern results are cached per their ttlMs and cacheScope.
func (c *Conn) ReadResource(ctx context.Context, uri string, opts ...CallOption) (*mcp.ReadResourceResult, error) {
	p := params{{"uri", quoteJSON(uri)}}
	res, err := c.do(ctx, "resources/read", p, callOpts(opts), nil, true, uri)
	if err != nil {
		return nil, err
	}
	var r mcp.ReadResourceResult
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, protocolError("resources/read result: %v", err)
	}
	return &r, nil
}

// Complete asks for completion/complete suggestions.
func (c *Conn) Complete(ctx context.Context, req *mcp.CompleteParams, opts ...CallOption) (*mcp.CompleteResult, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	p := params{}
	for _, k := range []string{"ref", "argument", "context"} {
		if v, ok := m[k]; ok {
			p = append(p, field{k, v})
		}
	}
	res, err := c.do(ctx, "completion/complete", p, callOpts(opts), nil, false, "")
	if err != nil {
		return nil, err
	}
	var r mcp.CompleteResult
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, protocolError("completion/complete result: %v", err)
	}
	return &r, nil
}

// ListPrompts fetches one page of prompts/list (cursor nil: the first;
// NextCursor nil: the last page).
func (c *Conn) ListPrompts(ctx context.Context, cursor *string, opts ...CallOption) (*mcp.ListPromptsResult, error) {
	var r mcp.ListPromptsResult
	return &r, c.list(ctx, "prompts/list", cursor, opts, &r)
}

// ListResources fetches one page of resources/list (cursor nil: the
// first; NextCursor nil: the last page).
func (c *Conn) ListResources(ctx context.Context, cursor *string, opts ...CallOption) (*mcp.ListResourcesResult, error) {
	var r mcp.ListResourcesResult
	return &r, c.list(ctx, "resources/list", cursor, opts, &r)
}

// ListResourceTemplates fetches one page of resources/templates/list
// (cursor nil: the first; NextCursor nil: the last page).
func (c *Conn) ListResourceTemplates(ctx context.Context, cursor *string, opts ...CallOption) (*mcp.ListResourceTemplatesResult, error) {
	var r mcp.ListResourceTemplatesResult
	return &r, c.list(ctx, "resources/templates/list", cursor, opts, &r)
}

func (c *Conn) list(ctx context.Context, method string, cursor *string, opts []CallOption, out any) error {
	p, target := cursorParams(cursor)
	res, err := c.do(ctx, method, p, callOpts(opts), nil, true, target)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(res, out); err != nil {
		return protocolError("%s result: %v", method, err)
	}
	return nil
}

// Call sends any request and returns its raw result (2026-07-28 requests
// get the standard _meta and headers; input rounds are run for the three
// methods that have them). params must be a JSON object or nil.
func (c *Conn) Call(ctx context.Context, method string, paramsJSON json.RawMessage, opts ...CallOption) (json.RawMessage, error) {
	var p params
	if len(paramsJSON) > 0 {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(paramsJSON, &m); err != nil {
			return nil, errNotObject
		}
		for k, v := range m {
			if k != "_meta" {
				p = append(p, field{k, v})
			}
		}
	}
	return c.do(ctx, method, p, callOpts(opts), nil, false, "")
}

// Discover sends server/discover on a modern Conn (through the cache).
func (c *Conn) Discover(ctx context.Context, opts ...CallOption) (*Discovery, error) {
	if !c.modern {
		return nil, errors.New("mcp client: server/discover on a legacy connection")
	}
	res, err := c.do(ctx, "server/discover", nil, callOpts(opts), nil, true, "")
	if err != nil {
		return nil, err
	}
	return decodeDiscovery(c.url, res)
}
