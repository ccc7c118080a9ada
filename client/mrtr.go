package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

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

// callMRTR runs a 2026-07-28 request through its input rounds: each
// round's input requests are answered in the server's order, and the retry
// carries the original params plus inputResponses and the requestState byte
// for byte (absent if none), under a new id with its headers recomputed.
// rounds counts the retries sent.
func (p *modernEra) callMRTR(ctx context.Context, r *request) (res json.RawMessage, rounds int, err error) {
	res, k, err := p.round(ctx, r, 0)
	for err == nil && k != nil {
		var responses json.RawMessage
		if responses, err = p.c.answerAll(ctx, k.Keys, k.Requests); err != nil {
			return nil, rounds, err
		}
		rounds++
		res, k, err = k.resume(ctx, responses)
	}
	return res, rounds, err
}

// round sends round n of r (0 for the first request); an input_required
// result becomes a Continuation.
func (p *modernEra) round(ctx context.Context, r *request, n int) (json.RawMessage, *Continuation, error) {
	res, rt, err := p.sendRound(ctx, r, n)
	if err != nil {
		return nil, nil, err
	}
	if rt == resultComplete {
		return res, nil, nil
	}
	if rt == resultTask {
		// Only tools/call may answer with a task, and only to a client
		// that declared the extension (SEP-2663 §Capability Negotiation:
		// anything else is an invalid response).
		if r.method != "tools/call" || !p.c.opts.Tasks {
			return nil, nil, protocolError("%s answered with a task", r.method)
		}
		return res, nil, nil
	}
	if !mrtrMethod(r.method) {
		return nil, nil, protocolError("%s answered input_required", r.method)
	}
	ir, err := parseInputRequired(res)
	if err != nil {
		return nil, nil, err
	}
	if n >= p.c.opts.MaxRounds {
		return nil, nil, &MaxRoundsError{Method: r.method, Rounds: n}
	}
	return nil, &Continuation{p: p, r: *r, Keys: ir.keys, Requests: ir.requests, hasReqs: ir.hasReqs, state: ir.state, round: n + 1}, nil
}

// Continuation is an unanswered input_required round of a tool call
// (CallToolOnce). Its state belongs to this call only: other calls carry
// none of it. Answer or Resume it once.
type Continuation struct {
	p *modernEra
	// r is the original request (params without inputResponses or
	// requestState).
	r       request
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
	b, err := k.p.c.answerAll(ctx, k.Keys, k.Requests)
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
		k.r.co.keepRaw(raw)
	}
	return r, nil, err
}

func (k *Continuation) resume(ctx context.Context, responses json.RawMessage) (json.RawMessage, *Continuation, error) {
	r := k.r
	if k.hasReqs && responses != nil {
		r.params = r.params.with("inputResponses", responses)
	}
	if k.state != nil {
		r.params = r.params.with("requestState", k.state)
	}
	return k.p.round(ctx, &r, k.round)
}
