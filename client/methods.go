package client

import (
	"context"
	"encoding/json"

	"github.com/mcpfn/mcpfn/mcp"
)

// cursorParams returns the params of a list request from cursor, and the
// cache target of its page.
func cursorParams(cursor *string) (params, string) {
	if cursor == nil {
		return nil, ""
	}
	// "" is a real cursor: it is sent, and it is a cache key of its own.
	return params{{"cursor", quoteJSON(*cursor)}}, "c:" + *cursor
}

// GetPrompt gets a prompt, running its input rounds like CallTool.
func (c *Conn) GetPrompt(ctx context.Context, name string, args map[string]string, opts *CallOptions) (*mcp.GetPromptResult, error) {
	p := params{{"name", quoteJSON(name)}}
	if args != nil {
		b, _ := json.Marshal(args)
		p = append(p, field{"arguments", b})
	}
	var r mcp.GetPromptResult
	if err := c.doInto(ctx, &request{method: "prompts/get", params: p, co: opts.resolve()}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ReadResource reads a resource, running its input rounds like CallTool.
// Modern results are cached per their ttlMs and cacheScope.
func (c *Conn) ReadResource(ctx context.Context, uri string, opts *CallOptions) (*mcp.ReadResourceResult, error) {
	p := params{{"uri", quoteJSON(uri)}}
	var r mcp.ReadResourceResult
	if err := c.doInto(ctx, &request{method: "resources/read", params: p, co: opts.resolve(), cacheable: true, target: uri}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Complete asks for completion/complete suggestions.
func (c *Conn) Complete(ctx context.Context, req *mcp.CompleteParams, opts *CallOptions) (*mcp.CompleteResult, error) {
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
	var r mcp.CompleteResult
	if err := c.doInto(ctx, &request{method: "completion/complete", params: p, co: opts.resolve()}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ListPrompts fetches one page of prompts/list (cursor nil: the first;
// NextCursor nil: the last page).
func (c *Conn) ListPrompts(ctx context.Context, cursor *string, opts *CallOptions) (*mcp.ListPromptsResult, error) {
	var r mcp.ListPromptsResult
	return &r, c.list(ctx, "prompts/list", cursor, opts, &r)
}

// ListResources fetches one page of resources/list (cursor nil: the
// first; NextCursor nil: the last page).
func (c *Conn) ListResources(ctx context.Context, cursor *string, opts *CallOptions) (*mcp.ListResourcesResult, error) {
	var r mcp.ListResourcesResult
	return &r, c.list(ctx, "resources/list", cursor, opts, &r)
}

// ListResourceTemplates fetches one page of resources/templates/list
// (cursor nil: the first; NextCursor nil: the last page).
func (c *Conn) ListResourceTemplates(ctx context.Context, cursor *string, opts *CallOptions) (*mcp.ListResourceTemplatesResult, error) {
	var r mcp.ListResourceTemplatesResult
	return &r, c.list(ctx, "resources/templates/list", cursor, opts, &r)
}

func (c *Conn) list(ctx context.Context, method string, cursor *string, opts *CallOptions, out any) error {
	p, target := cursorParams(cursor)
	return c.doInto(ctx, &request{method: method, params: p, co: opts.resolve(), cacheable: true, target: target}, out)
}

// doInto sends r and decodes its result into out; a result that does not
// decode is a protocol error.
func (c *Conn) doInto(ctx context.Context, r *request, out any) error {
	method := r.method
	res, err := c.do(ctx, r)
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
func (c *Conn) Call(ctx context.Context, method string, paramsJSON json.RawMessage, opts *CallOptions) (json.RawMessage, error) {
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
	return c.do(ctx, &request{method: method, params: p, co: opts.resolve()})
}

// Discover sends server/discover on a modern Conn (through the cache); a
// legacy Conn has none, and fails.
func (c *Conn) Discover(ctx context.Context, opts *CallOptions) (*Discovery, error) {
	return c.era.discover(ctx, opts.resolve())
}

// Notification is one server notification.
type Notification struct {
	Method string
	Params json.RawMessage
}

// Listen delivers the server's change notifications to fn until ctx ends
// or the server ends the subscription. In 2026-07-28 it sends
// subscriptions/listen and reads its stream: the server's acknowledgement
// (the notifications it will send) is returned through ack before any other
// notification; Listen returns nil when the server closes the subscription
// with its result, ErrStreamBroken when the stream drops, and an error
// matching ErrTimeout when it stays silent (no event, no keep-alive) for
// Options.StreamIdleTimeout; listen again after either.
// In legacy sessions the notifications come on the session's GET stream and
// Listen returns when ctx ends; ack gets the filter unchanged. Matching
// cached results are dropped either way. fn may be called concurrently with
// other Conn methods, never concurrently with itself.
func (c *Conn) Listen(ctx context.Context, f mcp.SubscriptionFilter, ack func(mcp.SubscriptionFilter), fn func(Notification)) error {
	if c.isClosed() {
		return ErrClosed
	}
	return c.era.listen(ctx, f, ack, fn)
}
