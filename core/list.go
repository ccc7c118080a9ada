package core

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpfn/mcpfn/core/internal/schema"
	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// paramsCursor reads params.cursor.
func paramsCursor(params []byte) (cursor string, has bool, err error) {
	var bad bool
	jsonwire.EachMember(params, func(k, v []byte) bool {
		if jsonwire.KeyIs(k, "cursor") {
			cursor, has = jsonwire.RawString(v)
			bad = !has && !jsonwire.IsNull(v)
			return false
		}
		return true
	})
	if bad {
		return "", false, InvalidParamsError("Invalid params: cursor must be a string")
	}
	return cursor, has, nil
}

const cursorPrefix = "c1:"

func encodeCursor(key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + key))
}

func decodeCursor(c string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.HasPrefix(string(b), cursorPrefix) {
		return "", false
	}
	return string(b[len(cursorPrefix):]), true
}

// paginate returns the page of items (sorted by key) after cursor.
func paginate[T any](items []T, key func(T) string, cursor string, hasCursor bool, size int) ([]T, string, error) {
	start := 0
	if hasCursor {
		after, ok := decodeCursor(cursor)
		if !ok {
			return nil, "", InvalidParamsError("Invalid params: invalid cursor")
		}
		for start < len(items) && key(items[start]) <= after {
			start++
		}
	}
	end := start + size
	if end >= len(items) {
		return items[start:], "", nil
	}
	return items[start:end], encodeCursor(key(items[end-1])), nil
}

// listPage answers a paginated list method (prompts, resources, resource
// templates): the page of items after the request's cursor, encoded by
// wire, as the result member, with the method's cache hint.
func listPage[T, W any](r *Request, params []byte, items []T, key func(T) string, wire func(T) W, member, method string) ([]byte, error) {
	cursor, has, err := paramsCursor(params)
	if err != nil {
		return nil, err
	}
	page, next, err := paginate(items, key, cursor, has, r.srv.opts.PageSize)
	if err != nil {
		return nil, err
	}
	list := make([]W, len(page))
	for i, x := range page {
		list[i] = wire(x)
	}
	lj, err := json.Marshal(list)
	if err != nil {
		return nil, err
	}
	b := append(append(append([]byte(`{"`), member...), `":`...), lj...)
	b = append(b, ',')
	if next != "" {
		b = append(jsonwire.AppendString(append(b, `"nextCursor":`...), next), ',')
	}
	b = r.resultTail(b, method, nil, nil)
	return append(b, '}'), nil
}

// listTools answers tools/list.
func (s *Server) listTools(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	cursor, has, err := paramsCursor(params)
	if err != nil {
		return nil, err
	}
	if s.opts.ListToolsHandler != nil {
		res, err := s.opts.ListToolsHandler(ctx, &ListToolsRequest{Request: r, Cursor: cursor, HasCursor: has})
		if err != nil {
			return nil, err
		}
		b := []byte(`{"tools":[`)
		n := 0
		for _, t := range res.Tools {
			if _, err := s.advancedTool(t); err != nil {
				// Clients drop invalid tools; do not list them at all.
				s.log.WarnContext(ctx, "tools/list: skipping an invalid tool", "tool", t.Name, "error", err.Error())
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
			b = append(b, `"nextCursor":`...)
			b = jsonwire.AppendString(b, *res.NextCursor)
			b = append(b, ',')
		}
		b = r.resultTail(b, "tools/list", nil, s.pageHint("tools/list", res.TTLMs, res.CacheScope))
		return append(b, '}'), nil
	}
	list := r.era.tools(s.reg.Load())
	page, next, err := paginate(list, func(t *serverTool) string { return t.tool.Name }, cursor, has, s.opts.PageSize)
	if err != nil {
		return nil, err
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

// pageHint is the cache hint of a page an advanced list handler returned:
// the server's hint for method, with the page's ttlMs (negative: 0) and
// cacheScope where it sets them; nil when it sets neither.
func (s *Server) pageHint(method string, ttlMs *int64, scope CacheScope) *cacheWire {
	if ttlMs == nil && scope == "" {
		return nil
	}
	h := s.hints[method]
	if ttlMs != nil {
		h.ttlMs = max(*ttlMs, 0)
	}
	if scope != "" {
		h.scope = scope
	}
	return &h
}

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
