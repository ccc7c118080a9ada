package core

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

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

// Handler cursors continue ListToolsHandler's pages after the typed
// tools': "h0:" asks for its first page, "h1:" + c for its page after c.
const (
	handlerFirst  = "h0:"
	handlerCursor = "h1:"
)

func encodeHandlerCursor(c string, first bool) string {
	if first {
		return base64.RawURLEncoding.EncodeToString([]byte(handlerFirst))
	}
	return base64.RawURLEncoding.EncodeToString([]byte(handlerCursor + c))
}

// decodeHandlerCursor reads a handler cursor; ok is false for any other.
func decodeHandlerCursor(c string) (cursor string, first, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	switch {
	case err != nil:
		return "", false, false
	case string(b) == handlerFirst:
		return "", true, true
	case strings.HasPrefix(string(b), handlerCursor):
		return string(b[len(handlerCursor):]), false, true
	}
	return "", false, false
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
func listPage[T, W any](ctx context.Context, r *Request, params []byte, items []T, key func(T) string, wire func(T) W, feature func(T) Feature, member, method string) ([]byte, error) {
	cursor, has, err := paramsCursor(params)
	if err != nil {
		return nil, err
	}
	items = listedOnly(ctx, r.srv, r, items, feature)
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

// pageHint is the cache hint of a page an advanced list handler returned:
// the server's hint for method, with the page's ttlMs and cacheScope where
// it sets them; nil when it sets neither. A legacy era drops it
// (appendResultHead).
//
// A negative ttlMs is the handler's error, in every era: the request fails
// with -32603 and the server logs it (replyError), as ballerina/mcp answers
// "ttlMs must be non-negative". ttlMs MUST be at least 0 (2026-07-28
// server/utilities/caching; schema CacheableResult, minimum 0), and
// ServerOptions.Validate refuses a negative CacheHints TTL for the same
// reason; sending 0 in its place would hide the handler's bug behind a
// valid answer. The check does not wait for a 2026-07-28 request: the
// handler's result is the same in every era, and a legacy client's list
// shows the bug before a 2026-07-28 client meets it.
func (s *Server) pageHint(method string, ttlMs *int64, scope CacheScope) (*cacheWire, error) {
	if ttlMs == nil && scope == "" {
		return nil, nil
	}
	if ttlMs != nil && *ttlMs < 0 {
		return nil, fmt.Errorf("%s: the list handler returned ttlMs %d; ttlMs must be at least 0", method, *ttlMs)
	}
	h := s.hints[method]
	if ttlMs != nil {
		h.ttlMs = *ttlMs
	}
	if scope != "" && (scope != CacheScopePublic || !s.perCaller()) {
		h.scope = scope // a filtered list is never public
	}
	return &h, nil
}
