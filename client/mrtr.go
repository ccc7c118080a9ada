package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mcpfn/mcpfn/mcp"
)

// inputRequired is a decoded input_required result (2026-07-28
// basic/patterns/mrtr).
type inputRequired struct {
	keys     []string // the keys of requests, in the server's order
	requests mcp.InputRequests
	hasReqs  bool
	state    json.RawMessage // requestState, raw JSON string, byte for byte
}

// parseInputRequired decodes an input_required result, keeping the order of
// inputRequests and the requestState token as sent.
func parseInputRequired(res json.RawMessage) (*inputRequired, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(res, &top); err != nil {
		return nil, protocolError("input_required result: %v", err)
	}
	ir := &inputRequired{}
	if st, ok := top["requestState"]; ok {
		st = bytes.TrimSpace(st)
		if len(st) == 0 || st[0] != '"' {
			return nil, protocolError("requestState is not a string")
		}
		ir.state = st
	}
	if reqs, ok := top["inputRequests"]; ok {
		ir.hasReqs = true
		ir.requests = mcp.InputRequests{}
		dec := json.NewDecoder(bytes.NewReader(reqs))
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return nil, protocolError("inputRequests is not an object")
		}
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				return nil, protocolError("inputRequests: %v", err)
			}
			key := t.(string)
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, protocolError("inputRequests[%q]: %v", key, err)
			}
			r := &mcp.InputRequest{}
			if err := r.UnmarshalJSON(raw); err != nil {
				return nil, protocolError("inputRequests[%q]: %v", key, err)
			}
			if _, dup := ir.requests[key]; !dup {
				ir.keys = append(ir.keys, key)
			}
			ir.requests[key] = r
		}
	}
	if !ir.hasReqs && ir.state == nil {
		return nil, protocolError("input_required without inputRequests or requestState")
	}
	return ir, nil
}

func mrtrMethod(m string) bool {
	return m == "tools/call" || m == "prompts/get" || m == "resources/read"
}

// callMRTR runs a modern request through its input rounds: each round's
// input requests are answered in the server's order, and the retry carries
// the original params plus inputResponses and the requestState byte for byte
// (absent if none), under a new id with its headers recomputed.
// rounds counts the retries sent.
func (c *Conn) callMRTR(ctx context.Context, method string, p params, co *callOptions, extra http.Header) (res json.RawMessage, rounds int, err error) {
	res, k, err := c.callOnce(ctx, method, p, co, extra, 0)
	for err == nil && k != nil {
		var responses json.RawMessage
		if responses, err = c.answerAll(ctx, k.Keys, k.Requests); err != nil {
			return nil, rounds, err
		}
		rounds++
		res, k, err = k.resume(ctx, responses)
	}
	return res, rounds, err
}

// callOnce sends one round; an input_required result becomes a
// Continuation.
func (c *Conn) callOnce(ctx context.Context, method string, p params, co *callOptions, extra http.Header, round int) (json.RawMessage, *Continuation, error) {
	res, rt, err := c.callModern(ctx, method, p, co, extra)
	if err != nil {
		return nil, nil, err
	}
	if rt == resultComplete {
		return res, nil, nil
	}
	if !mrtrMethod(method) {
		return nil, nil, protocolError("%s answered input_required", method)
	}
	ir, err := parseInputRequired(res)
	if err != nil {
		return nil, nil, err
	}
	if round >= c.opts.MaxRounds {
		return nil, nil, &MaxRoundsError{Method: method, Rounds: round}
	}
	return nil, &Continuation{c: c, method: method, base: p, co: co, extra: extra, Keys: ir.keys, Requests: ir.requests, hasReqs: ir.hasReqs, state: ir.state, round: round + 1}, nil
}

// Continuation is an unanswered input_required round of a tool call
// (CallToolOnce). Its state belongs to this call only: other calls carry
// none of it. Answer or Resume it once.
type Continuation struct {
	c       *Conn
	method  string
	base    params
	co      *callOptions
	extra   http.Header
	hasReqs bool
	state   json.RawMessage
	round   int
	// Keys are the keys of Requests, in the server's order.
	Keys []string
	// Requests are the inputs asked for, by key; a decoded request keeps
	// its params raw (a json.RawMessage).
	Requests mcp.InputRequests
}

// Resume retries the tool call with the given answers (a result per
// Requests key: mcp.ElicitResult, mcp.CreateMessageResult or
// mcp.ListRootsResult JSON).
// It returns the complete result, or the next Continuation.
func (k *Continuation) Resume(ctx context.Context, responses map[string]json.RawMessage) (*mcp.CallToolResult, *Continuation, error) {
	var b []byte
	if k.hasReqs {
		b = []byte{'{'}
		for i, key := range k.Keys {
			v, ok := responses[key]
			if !ok {
				return nil, nil, fmt.Errorf("mcp client: no response for input %q", key)
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = append(append(appendJSONString(b, key), ':'), v...)
		}
		b = append(b, '}')
	}
	return k.toolResult(k.resume(ctx, b))
}

// Answer answers the inputs with the Conn's handlers (Options.Elicitation,
// Sampling, Roots) and resumes.
func (k *Continuation) Answer(ctx context.Context) (*mcp.CallToolResult, *Continuation, error) {
	b, err := k.c.answerAll(ctx, k.Keys, k.Requests)
	if err != nil {
		return nil, nil, err
	}
	if !k.hasReqs {
		b = nil
	}
	return k.toolResult(k.resume(ctx, b))
}

func (k *Continuation) toolResult(raw json.RawMessage, next *Continuation, err error) (*mcp.CallToolResult, *Continuation, error) {
	if err != nil || next != nil {
		return nil, next, err
	}
	r, err := decodeCallToolResult(raw)
	if err == nil {
		k.co.keepRaw(raw)
	}
	return r, nil, err
}

func (k *Continuation) resume(ctx context.Context, responses json.RawMessage) (json.RawMessage, *Continuation, error) {
	p := k.base
	if k.hasReqs && responses != nil {
		p = p.with("inputResponses", responses)
	}
	if k.state != nil {
		p = p.with("requestState", k.state)
	}
	return k.c.callOnce(ctx, k.method, p, k.co, k.extra, k.round)
}

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
		if c.caps.Elicitation == nil {
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
		return c.caps.Sampling != nil
	case "roots/list":
		return c.caps.Roots != nil
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
