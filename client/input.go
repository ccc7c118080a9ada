package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpfn/mcpfn/mcp"
)

// Answering the server's requests for input, in both eras: the input
// requests of a 2026-07-28 input_required result, and the
// elicitation/create, sampling/createMessage and roots/list requests a
// legacy server sends on a stream. The handlers are the Client's
// (Options.Elicitation, Sampling, Roots).

// answerAll answers every input request in the order of keys and returns
// the inputResponses object.
func (c *Conn) answerAll(ctx context.Context, keys []string, reqs mcp.InputRequests) (json.RawMessage, error) {
	b := []byte{'{'}
	for i, key := range keys {
		r := reqs[key]
		p := rawParams(r)
		if !c.declared(r.Method, p) {
			return nil, protocolError("input request %q of undeclared kind %s", key, r.Method)
		}
		v, err := c.answerInput(ctx, r.Method, p)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(appendJSONString(b, key), ':'), v...)
	}
	return append(b, '}'), nil
}

// rawParams returns the params of an input request as raw JSON: as
// received, or (for a request a caller built) marshalled.
func rawParams(r *mcp.InputRequest) json.RawMessage {
	switch p := r.Params.(type) {
	case nil:
		return nil
	case json.RawMessage:
		return p
	}
	b, err := json.Marshal(r.Params)
	if err != nil {
		return nil
	}
	return b
}

// declared reports whether the client declared the capability an input
// request needs.
func (c *Conn) declared(method string, p json.RawMessage) bool {
	switch method {
	case "elicitation/create":
		if c.cl.caps.Elicitation == nil {
			return false
		}
		var m struct {
			Mode string `json:"mode"`
		}
		_ = json.Unmarshal(p, &m)
		if m.Mode == "url" {
			return c.opts.ElicitationURL
		}
		return m.Mode == "" || m.Mode == "form"
	case "sampling/createMessage":
		return c.cl.caps.Sampling != nil
	case "roots/list":
		return c.cl.caps.Roots != nil
	}
	return false
}

// answerInput runs the handler of one input request or server request and
// returns its result.
func (c *Conn) answerInput(ctx context.Context, method string, p json.RawMessage) (json.RawMessage, error) {
	if !c.declared(method, p) {
		return nil, protocolError("request of undeclared kind %s", method)
	}
	switch method {
	case "elicitation/create":
		var w struct {
			Mode            string          `json:"mode"`
			Message         string          `json:"message"`
			RequestedSchema json.RawMessage `json:"requestedSchema"`
			URL             string          `json:"url"`
			ElicitationID   string          `json:"elicitationId"`
		}
		if err := json.Unmarshal(p, &w); err != nil {
			return nil, protocolError("elicitation params: %v", err)
		}
		if w.Mode == "" {
			w.Mode = "form"
		}
		r, err := c.opts.Elicitation(ctx, &ElicitRequest{Mode: w.Mode, Message: w.Message,
			RequestedSchema: w.RequestedSchema, URL: w.URL, ElicitationID: w.ElicitationID})
		if err != nil {
			return nil, err
		}
		if r == nil {
			r = &mcp.ElicitResult{Action: mcp.ActionCancel}
		}
		switch r.Action {
		case mcp.ActionAccept:
			if w.Mode == "url" {
				return json.RawMessage(`{"action":"accept"}`), nil // URL accept: no content
			}
			content := r.Content
			if c.opts.ElicitationDefaults {
				content = applyDefaults(content, w.RequestedSchema)
			}
			if content == nil {
				content = map[string]any{}
			}
			cb, err := json.Marshal(content)
			if err != nil {
				return nil, err
			}
			return append(append([]byte(`{"action":"accept","content":`), cb...), '}'), nil
		case mcp.ActionDecline:
			return json.RawMessage(`{"action":"decline"}`), nil
		case mcp.ActionCancel:
			return json.RawMessage(`{"action":"cancel"}`), nil
		}
		return nil, fmt.Errorf("mcp client: elicitation handler returned action %q", r.Action)
	case "sampling/createMessage":
		return c.opts.Sampling(ctx, p)
	case "roots/list":
		roots, err := c.opts.Roots(ctx)
		if err != nil {
			return nil, err
		}
		if roots == nil {
			roots = []mcp.Root{}
		}
		b, err := json.Marshal(struct {
			Roots []mcp.Root `json:"roots"`
		}{roots})
		return b, err
	}
	return nil, protocolError("unknown input request %s", method)
}

// applyDefaults fills the defaults of a form's requestedSchema properties
// into content where it has no value (SEP-1034).
func applyDefaults(content map[string]any, schema json.RawMessage) map[string]any {
	var s struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return content
	}
	for name, prop := range s.Properties {
		if prop.Default == nil {
			continue
		}
		if _, ok := content[name]; ok {
			continue
		}
		if content == nil {
			content = map[string]any{}
		}
		content[name] = prop.Default
	}
	return content
}
