package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"

	"github.com/mcpfn/mcpfn/core/internal/schema"
	"github.com/mcpfn/mcpfn/internal/jsonwire"
	"github.com/mcpfn/mcpfn/internal/mcpheader"
	"github.com/mcpfn/mcpfn/mcp"
)

// listTools answers tools/list: the typed tools the caller may see, and
// in advanced mode the list handler's pages after them. With both, a cursor
// says which part it continues (a handler cursor, list.go, or a typed
// tool's); with the handler alone, its cursors pass through as it wrote
// them.
func (s *Server) listTools(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	cursor, has, err := paramsCursor(params)
	if err != nil {
		return nil, err
	}
	reg := s.reg.Load()
	typed := r.era.tools(reg)
	if s.opts.ListToolsHandler != nil {
		if len(typed) == 0 {
			return s.listHandlerTools(ctx, r, reg, cursor, has, false)
		}
		if has {
			if hc, first, ok := decodeHandlerCursor(cursor); ok {
				return s.listHandlerTools(ctx, r, reg, hc, !first, true)
			}
		}
	}
	list := listedOnly(ctx, s, r, typed, typedToolFeature)
	page, next, err := paginate(list, func(t *serverTool) string { return t.tool.Name }, cursor, has, s.opts.PageSize)
	if err != nil {
		return nil, err
	}
	if next == "" && s.opts.ListToolsHandler != nil {
		next = encodeHandlerCursor("", true) // the handler's first page
	}
	b := make([]byte, 0, 256*len(page)+128)
	b = append(b, `{"tools":[`...)
	for i, t := range page {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r.era.toolEntry(t, r.ProtocolVersion)...)
	}
	b = append(b, "],"...)
	if next != "" {
		b = append(b, `"nextCursor":`...)
		b = jsonwire.AppendString(b, next)
		b = append(b, ',')
	}
	b = r.resultTail(b, "tools/list", nil, nil)
	return append(b, '}'), nil
}

// listHandlerTools answers tools/list with a page of ListToolsHandler:
// without typed tools, its cursors as it wrote them (wrap false); after
// typed tools, wrapped in handler cursors. A tool the caller may not see,
// and one named like a typed tool served in the request's era, is left out.
func (s *Server) listHandlerTools(ctx context.Context, r *Request, reg *registry, cursor string, has, wrap bool) ([]byte, error) {
	res, err := s.opts.ListToolsHandler(ctx, &ListToolsRequest{Request: r, Cursor: cursor, HasCursor: has})
	if err != nil {
		return nil, err
	}
	b := []byte(`{"tools":[`)
	n := 0
	for _, t := range res.Tools {
		if st := reg.tools[t.Name]; st != nil && r.era.serves(st) {
			continue // the typed tool is the one called
		}
		if _, err := s.advancedTool(t); err != nil {
			// Clients drop invalid tools; do not list them at all.
			s.log.WarnContext(ctx, "tools/list: skipping an invalid tool", "tool", t.Name, "error", err.Error())
			continue
		}
		if !s.listed(ctx, r, Feature{Kind: FeatureTool, Tool: t}) {
			continue
		}
		tj, err := r.era.advancedTool(t)
		if err != nil {
			return nil, fmt.Errorf("tools/list: tool %q: %w", t.Name, err)
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, tj...)
	}
	b = append(b, "],"...)
	if res.NextCursor != nil {
		next := *res.NextCursor
		if wrap {
			next = encodeHandlerCursor(next, false)
		}
		b = append(b, `"nextCursor":`...)
		b = jsonwire.AppendString(b, next)
		b = append(b, ',')
	}
	hint, err := s.pageHint("tools/list", res.TTLMs, res.CacheScope)
	if err != nil {
		return nil, err
	}
	b = r.resultTail(b, "tools/list", nil, hint)
	return append(b, '}'), nil
}

func typedToolFeature(st *serverTool) Feature { return Feature{Kind: FeatureTool, Tool: st.tool} }

// advancedToolJSON encodes a tool returned by an advanced list handler;
// objectOutputOnly drops an output schema whose root is not an object
// (legacy revisions).
func advancedToolJSON(t *Tool, objectOutputOnly bool) ([]byte, error) {
	tc := *t
	if tc.InputSchema == nil {
		tc.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	if objectOutputOnly && tc.OutputSchema != nil {
		out, err := schema.Normalize(tc.OutputSchema)
		if err != nil || schema.RootType(out) != "object" {
			tc.OutputSchema = nil
		}
	}
	return json.Marshal(&tc)
}

// callTool answers tools/call in both eras.
func (s *Server) callTool(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	var p CallToolParams
	var hasName, hasState bool
	var perr error
	jsonwire.EachMember(params, func(k, v []byte) bool {
		switch {
		case jsonwire.KeyIs(k, "name"):
			p.Name, hasName = jsonwire.RawString(v)
			if !hasName {
				perr = InvalidParamsError("Invalid params: name must be a string")
			}
		case jsonwire.KeyIs(k, "arguments"):
			if jsonwire.IsNull(v) {
				return true
			}
			if !jsonwire.IsObject(v) {
				perr = InvalidParamsError("Invalid params: arguments must be an object")
				return false
			}
			if perr = checkArguments("arguments", v); perr != nil {
				return false
			}
			p.Arguments = v
		default:
			if _, err := parseMRTRParams(k, v, &p.inputResponses, &p.requestState, &hasState); err != nil {
				perr = err
				return false
			}
		}
		return perr == nil
	})
	if perr != nil {
		return nil, perr
	}
	if !hasName {
		return nil, InvalidParamsError("Invalid params: name is required")
	}
	if p.Arguments == nil {
		p.Arguments = json.RawMessage(`{}`)
	}
	st, err := s.findTool(ctx, r, p.Name)
	if err != nil {
		return nil, err
	}
	r.targetFound = st != nil
	if st == nil && s.opts.CallToolHandler != nil && r.era.callsUnlisted() {
		st = s.unlisted // CallToolHandler receives the name and decides
	}
	if st == nil {
		// A tool name is at most 128 characters (2025-11-25
		// server/tools §Tool names): a longer one is echoed cut, so that
		// an answer never multiplies what a request sent.
		name := Truncate(p.Name, LogNameBytes)
		return nil, NewError(CodeInvalidParams, "Unknown tool: "+name).WithData(map[string]any{"name": name})
	}
	// Arguments are decoded into a value tree only when needed: for header
	// checks, and for validation that the fast path cannot prove.
	var args any
	decoded := false
	decode := func() error {
		if decoded {
			return nil
		}
		decoded = true
		if args, err = schema.DecodeForValidation(p.Arguments); err != nil {
			return InvalidParamsError("Invalid params: arguments: %v", err)
		}
		return nil
	}
	if h := r.era.paramHeaders(r.Header); h != nil && len(st.headers) > 0 {
		if err := decode(); err != nil {
			return nil, err
		}
		if err := checkParamHeaders(h, st.headers, args); err != nil {
			return nil, err
		}
	}
	if err := s.authorize(ctx, Operation{Method: "tools/call", Name: p.Name, Arguments: p.Arguments, ProtocolVersion: r.ProtocolVersion}); err != nil {
		return nil, err
	}
	binding := stateBinding{method: "tools/call", target: p.Name, args: p.Arguments, principal: r.Principal}
	if err := s.setInput(ctx, r, mrtrCall{binding: binding, responses: p.inputResponses, token: p.requestState, hasToken: hasState}); err != nil {
		return nil, err
	}
	if err := r.RequireCapabilities(st.required); err != nil {
		return nil, err
	}
	// Tasks (io.modelcontextprotocol/tasks) on 2026-07-28 only; a legacy
	// call of a task tool runs synchronously, and a legacy "task" member
	// is ignored.
	asTask := false
	if r.era.augmentsTasks() && (st.taskSupport == TaskOptional || st.taskSupport == TaskRequired) {
		declared := r.declaresTasks()
		if !declared && st.taskSupport == TaskRequired {
			return nil, missingTasks()
		}
		if declared && !taskOwner(r.Principal) {
			// A caller that cannot own a task gets none: an optional
			// tool runs synchronously (the server decides per request
			// whether to create a task, tasks.md §Capability
			// Negotiation), a required one is refused.
			if st.taskSupport == TaskRequired {
				return nil, errNoTaskOwner()
			}
			declared = false
		}
		switch {
		case declared && st.deferTask:
			r.taskPhase = taskPhasePre
		case declared:
			asTask = true
		}
	}
	req := &CallToolRequest{Request: r, Params: p}
	var res *CallToolResult
	if st.input != nil && !st.input.ProvenValid(p.Arguments) {
		if err := decode(); err != nil {
			return nil, err
		}
		if verr := st.input.Validate(args); verr != nil {
			res = &CallToolResult{Content: []Content{&TextContent{
				Text: fmt.Sprintf("Invalid arguments for tool %q: %v", p.Name, verr)}}, IsError: true}
		}
	}
	if res == nil && asTask {
		return s.createTask(ctx, r, st, &p)
	}
	if res == nil {
		res, err = st.handler(ctx, req)
		if err != nil {
			if r.taskPhase == taskPhasePre && errors.Is(err, errStartTask) {
				return s.createTask(ctx, r, st, &p)
			}
			return s.toolFailure(ctx, r, err, binding)
		}
		if res == nil {
			return nil, errors.New("tool handler returned no result")
		}
		if st.output != nil {
			if e := s.checkOutput(ctx, st, res); e != nil {
				return nil, e
			}
		}
	}
	return r.encodeCallToolResult(res, st)
}

// toolFailure maps a tool handler's error: input required, a tool error
// (isError result), a protocol error (*Error), or a plain error: a generic
// -32603 (logged), or with ServerOptions.ToolErrorResults an isError result
// with its message.
func (s *Server) toolFailure(ctx context.Context, r *Request, err error, b stateBinding) ([]byte, error) {
	var ir *InputRequiredError
	if errors.As(err, &ir) {
		return s.inputRequired(ctx, r, ir, b)
	}
	var te *ToolError
	if errors.As(err, &te) {
		return r.encodeCallToolResult(&CallToolResult{Content: []Content{&TextContent{Text: te.Message}}, IsError: true}, nil)
	}
	var e *Error
	var f serverFault
	if s.opts.ToolErrorResults && !errors.As(err, &e) && !errors.As(err, &f) {
		s.log.DebugContext(ctx, "tool failed: reported as an isError result", "error", errText(err))
		return r.encodeCallToolResult(&CallToolResult{Content: []Content{&TextContent{Text: err.Error()}}, IsError: true}, nil)
	}
	return nil, err
}

// inputRequired answers an input-required outcome in the request's era.
func (s *Server) inputRequired(ctx context.Context, r *Request, ir *InputRequiredError, b stateBinding) ([]byte, error) {
	return r.era.inputRequired(ctx, s, r, ir, b)
}

// findTool returns the registered tool, or in advanced mode the tool found by
// walking the list handler's pages (at most 100). It returns nil, nil for an
// unknown tool.
//
// A tool ServerOptions.Filter hides from the caller is unknown too.
func (s *Server) findTool(ctx context.Context, r *Request, name string) (*serverTool, error) {
	if st := s.reg.Load().tools[name]; st != nil && r.era.serves(st) {
		if !s.visible(ctx, r, typedToolFeature(st)) {
			return nil, nil
		}
		return st, nil
	}
	if s.opts.CallToolHandler == nil {
		return nil, nil
	}
	lr := &ListToolsRequest{Request: r}
	for page := 0; page < 100; page++ {
		res, err := s.opts.ListToolsHandler(ctx, lr)
		if err != nil {
			return nil, err
		}
		for _, t := range res.Tools {
			if t.Name == name {
				st, err := s.advancedTool(t)
				if err != nil {
					// An invalid tool is not listed: it is unknown.
					s.log.WarnContext(ctx, "tools/call: invalid tool", "tool", name, "error", err.Error())
					return nil, nil
				}
				if !s.visible(ctx, r, Feature{Kind: FeatureTool, Tool: t}) {
					return nil, nil
				}
				return st, nil
			}
		}
		if res.NextCursor == nil {
			return nil, nil
		}
		lr.Cursor, lr.HasCursor = *res.NextCursor, true
	}
	return nil, nil
}

// advancedTool prepares (once; cached per server, keyed by its encoded
// definition) a tool returned by the advanced list handler, so that its
// schemas are compiled once.
func (s *Server) advancedTool(t *Tool) (*serverTool, error) {
	def, err := advancedToolJSON(t, false)
	if err != nil {
		return nil, err
	}
	s.advMu.Lock()
	st, ok := s.advCache[string(def)]
	s.advMu.Unlock()
	if ok {
		return st, nil
	}
	tc := *t
	in, err := schema.Normalize(tc.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %q: input schema: %w", t.Name, err)
	}
	if in == nil {
		in = json.RawMessage(`{"type":"object"}`)
	}
	tc.InputSchema = in
	if tc.OutputSchema != nil {
		if tc.OutputSchema, err = schema.Normalize(tc.OutputSchema); err != nil {
			return nil, fmt.Errorf("tool %q: output schema: %w", t.Name, err)
		}
	}
	st, err = prepareTool(&tc, true)
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", t.Name, err)
	}
	if out, _ := tc.OutputSchema.(json.RawMessage); out != nil {
		// Compiled once per prepared tool, so that CallToolHandler's
		// results are checked against it (checkOutput).
		if st.output, err = schema.Compile(out, true); err != nil {
			return nil, fmt.Errorf("tool %q: output schema: %w", t.Name, err)
		}
	}
	st.handler = s.opts.CallToolHandler
	s.advMu.Lock()
	if len(s.advCache) >= maxAdvancedCache {
		s.advCache = map[string]*serverTool{} // bounded: start over
	}
	s.advCache[string(def)] = st
	s.advMu.Unlock()
	return st, nil
}

// maxAdvancedCache bounds the prepared advanced tools a server keeps.
const maxAdvancedCache = 1024

// checkParamHeaders validates the Mcp-Param-* headers of a call against its
// arguments (2026-07-28): a value in the body needs its header, equal after
// decoding (integers numerically, booleans exactly); no header for an absent
// or null value.
func checkParamHeaders(h map[string][]string, params []headerParam, args any) error {
	for _, hp := range params {
		v, present := mcpheader.Lookup(args, hp.path)
		hv, hasHeader, repeated := headerValue(h, hp.canon)
		if repeated {
			return headerMismatch("the " + hp.canon + " header is repeated")
		}
		if !present || v == nil {
			if hasHeader {
				return headerMismatch("the " + hp.canon + " header is sent but the argument is absent")
			}
			continue
		}
		if !hasHeader {
			return headerMismatch("the " + hp.canon + " header is required: the argument is present")
		}
		dec, ok := mcp.DecodeHeaderValue(hv)
		if !ok {
			return headerMismatch("the " + hp.canon + " header holds invalid characters")
		}
		if !headerMatches(dec, v) {
			return headerMismatch("the " + hp.canon + " header does not match the argument")
		}
	}
	return nil
}

// headerMatches compares a decoded header value with a body value.
func headerMatches(h string, v any) bool {
	switch x := v.(type) {
	case string:
		return h == x
	case bool:
		return (x && h == "true") || (!x && h == "false")
	case int64:
		b, ok := new(big.Float).SetString(h)
		return ok && b.Cmp(new(big.Float).SetInt64(x)) == 0
	case float64:
		f, err := strconv.ParseFloat(h, 64)
		return err == nil && f == x
	}
	return false
}
