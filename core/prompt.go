package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// PromptHandler renders a prompt. The framework checks required arguments
// before calling it. It may return an input-required error (see
// InputRequired) to ask the client for input.
type PromptHandler func(ctx context.Context, req *GetPromptRequest) (*GetPromptResult, error)

type serverPrompt struct {
	prompt  *Prompt
	handler PromptHandler
}

// AddPrompt registers a prompt, replacing any prompt of the same name, and
// notifies listeners. It panics on an invalid definition.
func (s *Server) AddPrompt(p *Prompt, h PromptHandler) {
	if p == nil || h == nil {
		panic("core: AddPrompt: nil prompt or handler")
	}
	if err := checkToolName(p.Name); err != nil {
		panic(fmt.Sprintf("core: AddPrompt %q: %v", p.Name, err))
	}
	pc := *p
	s.update(func(r *registry) { r.prompts[pc.Name] = &serverPrompt{prompt: &pc, handler: h} })
	s.changed(changePrompts, "")
}

// RemovePrompts unregisters prompts by name and notifies listeners.
func (s *Server) RemovePrompts(names ...string) {
	unregister(s, changePrompts, names, func(r *registry) map[string]*serverPrompt { return r.prompts })
}

// listPrompts answers prompts/list.
func (s *Server) listPrompts(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	return listPage(ctx, r, params, s.reg.Load().promptLst, func(p *serverPrompt) string { return p.prompt.Name },
		func(p *serverPrompt) *Prompt { return p.prompt }, promptFeature, "prompts", "prompts/list")
}

// getPrompt answers prompts/get.
func (s *Server) getPrompt(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	req := &GetPromptRequest{Request: r}
	var hasName, hasState bool
	var argsRaw []byte
	err := parseParams(params, func(k, v []byte) bool {
		switch {
		case jsonwire.KeyIs(k, "name"):
			req.Name, hasName = jsonwire.RawString(v)
		case jsonwire.KeyIs(k, "arguments"):
			if !jsonwire.IsNull(v) {
				argsRaw = v
			}
		default:
			return false
		}
		return true
	}, &req.inputResponses, &req.requestState, &hasState)
	if err != nil {
		return nil, err
	}
	if !hasName {
		return nil, InvalidParamsError("Invalid params: name must be a string")
	}
	if argsRaw != nil {
		if err := checkArguments("arguments", argsRaw); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(argsRaw, &req.Arguments); err != nil {
			return nil, InvalidParamsError("Invalid params: arguments must be an object of strings")
		}
	}
	sp := s.reg.Load().prompts[req.Name]
	if sp != nil && !s.visible(ctx, r, promptFeature(sp)) {
		sp = nil // hidden: answered as unknown
	}
	if sp == nil {
		name := Truncate(req.Name, LogNameBytes) // echoed cut, as an unknown tool's
		return nil, NewError(CodeInvalidParams, "Unknown prompt: "+name).WithData(map[string]any{"name": name})
	}
	for _, a := range sp.prompt.Arguments {
		if _, ok := req.Arguments[a.Name]; a.Required && !ok {
			return nil, InvalidParamsError("Invalid params: missing required argument %q", a.Name)
		}
	}
	if err := s.authorize(ctx, Operation{Method: "prompts/get", Name: req.Name, Arguments: argsRaw, ProtocolVersion: r.ProtocolVersion}); err != nil {
		return nil, err
	}
	binding := stateBinding{method: "prompts/get", target: req.Name, args: argsRaw, principal: r.Principal}
	if err := s.setInput(ctx, r, mrtrCall{binding: binding, responses: req.inputResponses, token: req.requestState, hasToken: hasState}); err != nil {
		return nil, err
	}
	res, err := sp.handler(ctx, req)
	if err != nil {
		var ir *InputRequiredError
		if errors.As(err, &ir) {
			return s.inputRequired(ctx, r, ir, binding)
		}
		return nil, err
	}
	if res == nil {
		return nil, errors.New("prompt handler returned no result")
	}
	msgs := res.Messages
	if msgs == nil {
		msgs = []PromptMessage{}
	}
	v := struct {
		Description string          `json:"description,omitempty"`
		Messages    []PromptMessage `json:"messages"`
	}{res.Description, msgs}
	return r.encodeResult(v, "", res.Meta, nil)
}

// complete answers completion/complete.
func (s *Server) complete(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	req := &CompleteRequest{Request: r}
	if err := json.Unmarshal(params, &req.Params); err != nil {
		return nil, InvalidParamsError("Invalid params: %v", err)
	}
	switch req.Params.Ref.Type {
	case "ref/prompt":
		if sp := s.reg.Load().prompts[req.Params.Ref.Name]; sp == nil || !s.visible(ctx, r, promptFeature(sp)) {
			return nil, InvalidParamsError("Invalid params: unknown prompt %q", req.Params.Ref.Name)
		}
	case "ref/resource":
		if req.Params.Ref.URI == "" {
			return nil, InvalidParamsError("Invalid params: ref.uri is required")
		}
	default:
		return nil, InvalidParamsError("Invalid params: ref.type must be ref/prompt or ref/resource")
	}
	op := completionOperation(&req.Params)
	op.ProtocolVersion = r.ProtocolVersion
	if err := s.authorize(ctx, op); err != nil {
		return nil, err
	}
	res, err := s.opts.CompletionHandler(ctx, req)
	if err != nil {
		return nil, err
	}
	c := Completion{Values: []string{}}
	if res != nil {
		c = res.Completion
		if c.Values == nil {
			c.Values = []string{}
		}
		if len(c.Values) > 100 {
			c.Values, c.HasMore = c.Values[:100], true
		}
	}
	v := struct {
		Completion Completion `json:"completion"`
	}{c}
	var meta Meta
	if res != nil {
		meta = res.Meta
	}
	return r.encodeResult(v, "", meta, nil)
}

func promptFeature(p *serverPrompt) Feature { return Feature{Kind: FeaturePrompt, Prompt: p.prompt} }
