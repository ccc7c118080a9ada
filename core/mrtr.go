package core

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// mrtrCall carries what the multi round-trip machinery needs about a call.
type mrtrCall struct {
	binding   stateBinding
	responses map[string]json.RawMessage
	token     string
	hasToken  bool
}

// setInput gives r its Input, unless it has one already (a legacy call the
// bridge runs again with the client's answers).
func (s *Server) setInput(ctx context.Context, r *Request, c mrtrCall) error {
	if r.Input != nil {
		return nil
	}
	in, err := s.openInput(ctx, c)
	if err != nil {
		return err
	}
	r.Input = in
	return nil
}

// openInput verifies a retried call's requestState and builds its Input view.
func (s *Server) openInput(ctx context.Context, c mrtrCall) (*InputResponses, error) {
	if !c.hasToken {
		// A first round. Every input_required result carries a sealed
		// state naming the keys it asked, so answers without one answer
		// nothing the server asked: they are ignored.
		return emptyInput, nil
	}
	p, err := s.sealer.open(ctx, c.token, c.binding)
	if err != nil {
		if e, ok := err.(*Error); ok && e.Cause != nil {
			s.log.DebugContext(ctx, "rejected requestState", "method", c.binding.method, "reason", e.Cause.Error())
		}
		return nil, err
	}
	in := &InputResponses{state: p.State, round: p.Round}
	for _, k := range p.Keys {
		if v, ok := c.responses[k]; ok {
			if in.raw == nil {
				in.raw = make(map[string]json.RawMessage, len(p.Keys))
			}
			in.raw[k] = v
		}
	}
	return in, nil
}

// tooManyInputRounds is the error of a request that asked for input more
// than max times (ServerOptions.MaxInputRounds), in either era.
func tooManyInputRounds(max int) *Error {
	return NewError(CodeInternalError, fmt.Sprintf("This request asked for input more than %d times (the server's limit of input rounds)", max)).
		WithData(map[string]any{"reason": "too_many_input_rounds", "maxInputRounds": max})
}

// encodeInputRequired checks an input_required answer against the rules of
// the spec and this request's client capabilities, seals its state and
// encodes the result.
func (s *Server) encodeInputRequired(ctx context.Context, r *Request, e *InputRequiredError, b stateBinding) ([]byte, error) {
	if err := s.checkInputRequired(e, r.declaredCaps(), r.era.strictForms()); err != nil {
		return nil, err
	}
	round := 1 // this input_required result's number in the call
	if r.Input != nil {
		round += r.Input.round
	}
	if round > s.opts.MaxInputRounds {
		return nil, tooManyInputRounds(s.opts.MaxInputRounds)
	}
	keys := make([]string, 0, len(e.Requests))
	for k := range e.Requests {
		keys = append(keys, k)
	}
	token, err := s.sealer.seal(ctx, e.State, keys, round, b)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, 256+len(token))
	out = append(out, `{"resultType":"input_required",`...)
	if len(e.Requests) > 0 {
		out = append(out, `"inputRequests":{`...)
		for i, k := range sortedKeys(e.Requests) {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(jsonwire.AppendString(out, k), ':')
			var err error
			if out, err = appendInputRequest(out, e.Requests[k]); err != nil {
				return nil, err
			}
		}
		out = append(out, "},"...)
	}
	out = append(jsonwire.AppendString(append(out, `"requestState":`...), token), ',')
	out = r.era.appendMeta(out, s, nil)
	out[len(out)-1] = '}'
	return out, nil
}

// appendInputRequest encodes an input request; the builders' form params
// are written directly (their schema is compact JSON already).
func appendInputRequest(b []byte, ir *InputRequest) ([]byte, error) {
	if p, ok := ir.Params.(*ElicitFormParams); ok && p != nil && ir.Method == MethodElicit && json.Valid(p.RequestedSchema) {
		b = append(b, `{"method":"elicitation/create","params":{`...)
		if p.Mode != "" {
			b = append(jsonwire.AppendString(append(b, `"mode":`...), p.Mode), ',')
		}
		b = jsonwire.AppendString(append(b, `"message":`...), p.Message)
		b = append(append(append(b, `,"requestedSchema":`...), p.RequestedSchema...), "}}"...)
		return b, nil
	}
	j, err := json.Marshal(ir)
	if err != nil {
		return nil, err
	}
	return append(b, j...), nil
}
