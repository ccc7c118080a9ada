package core

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/mcpfn/mcpfn/core/internal/schema"
)

// checkInputRequired validates an input_required answer before it is sent
// (strict: the 2026-07-28 form rules, era.strictForms),
// with the server's cache of form verdicts.
func (s *Server) checkInputRequired(e *InputRequiredError, caps *ClientCapabilities, strict bool) error {
	return checkInputRequiredWith(&s.formMemo, e, caps, strict)
}

// checkInputRequired validates an input_required answer without a cache.
func checkInputRequired(e *InputRequiredError, caps *ClientCapabilities, strict bool) error {
	return checkInputRequiredWith(nil, e, caps, strict)
}

func checkInputRequiredWith(forms *memo[[2]error], e *InputRequiredError, caps *ClientCapabilities, strict bool) error {
	if len(e.Requests) == 0 && e.State == "" {
		return internalf("an input_required result needs inputRequests or requestState")
	}
	keys := sortedKeys(e.Requests)
	var missing ClientCapabilities
	anyMissing := false
	for _, k := range keys {
		ir := e.Requests[k]
		if ir == nil {
			return internalf("input request %q is nil", k)
		}
		need, err := checkInputRequest(forms, ir, strict)
		if err != nil {
			return internalf("input request %q: %v", k, err)
		}
		if m := missingCaps(caps, need); m != nil {
			anyMissing = true
			if m.Elicitation != nil {
				if missing.Elicitation == nil {
					missing.Elicitation = &ElicitationCapabilities{}
				}
				if m.Elicitation.Form != nil {
					missing.Elicitation.Form = map[string]any{}
				}
				if m.Elicitation.URL != nil {
					missing.Elicitation.URL = map[string]any{}
				}
			}
			if m.Sampling != nil {
				if missing.Sampling == nil {
					missing.Sampling = &SamplingCapabilities{}
				}
				if m.Sampling.Tools != nil {
					missing.Sampling.Tools = map[string]any{}
				}
			}
			if m.Roots != nil {
				missing.Roots = &RootsCapabilities{}
			}
		}
	}
	if anyMissing {
		return MissingCapabilityError(&missing)
	}
	return nil
}

// checkInputRequest validates one input request and returns the client
// capabilities it needs.
// Capabilities input requests need, shared (never modified).
var (
	needForm     = &ClientCapabilities{Elicitation: &ElicitationCapabilities{Form: map[string]any{}}}
	needURL      = &ClientCapabilities{Elicitation: &ElicitationCapabilities{URL: map[string]any{}}}
	needSampling = &ClientCapabilities{Sampling: &SamplingCapabilities{}}
	needRoots    = &ClientCapabilities{Roots: &RootsCapabilities{}}
)

// checkFormSchemaCached checks a form schema through forms, the server's
// cache of verdicts (schemas are usually the same on every call of a tool:
// modern verdict, legacy verdict), or directly when forms is nil.
func checkFormSchemaCached(forms *memo[[2]error], raw json.RawMessage, strict bool) error {
	if forms == nil {
		return schema.CheckForm(raw, strict)
	}
	i := 0
	if !strict {
		i = 1
	}
	if v, ok := forms.load(raw); ok {
		return v[i]
	}
	verdict := [2]error{schema.CheckForm(raw, true), schema.CheckForm(raw, false)}
	forms.store(raw, verdict, 4096)
	return verdict[i]
}

func checkInputRequest(forms *memo[[2]error], ir *InputRequest, strict bool) (*ClientCapabilities, error) {
	// The builders' types are checked directly; anything else is checked
	// on its JSON form below.
	switch p := ir.Params.(type) {
	case *ElicitFormParams:
		if ir.Method != MethodElicit || p == nil {
			break
		}
		if strings.TrimSpace(p.Message) == "" {
			return nil, fmt.Errorf("the elicitation message is blank")
		}
		if p.Mode != "" && p.Mode != "form" {
			break
		}
		if err := checkFormSchemaCached(forms, p.RequestedSchema, strict); err != nil {
			return nil, err
		}
		return needForm, nil
	case *CreateMessageParams:
		if ir.Method != MethodCreateMessage || p == nil {
			break
		}
		if len(p.Messages) == 0 {
			return nil, fmt.Errorf("a sampling request needs at least one message")
		}
		if p.MaxTokens <= 0 {
			return nil, fmt.Errorf("a sampling request needs a positive maxTokens")
		}
		if len(p.Tools) > 0 {
			return &ClientCapabilities{Sampling: &SamplingCapabilities{Tools: map[string]any{}}}, nil
		}
		return needSampling, nil
	}
	pj, err := json.Marshal(ir.Params)
	if err != nil {
		return nil, err
	}
	switch ir.Method {
	case MethodElicit:
		var p struct {
			Mode            string          `json:"mode"`
			Message         string          `json:"message"`
			RequestedSchema json.RawMessage `json:"requestedSchema"`
			URL             string          `json:"url"`
		}
		if err := json.Unmarshal(pj, &p); err != nil {
			return nil, fmt.Errorf("malformed elicitation params: %v", err)
		}
		if strings.TrimSpace(p.Message) == "" {
			return nil, fmt.Errorf("the elicitation message is blank")
		}
		switch p.Mode {
		case "", "form":
			if err := schema.CheckForm(p.RequestedSchema, strict); err != nil {
				return nil, err
			}
			return needForm, nil
		case "url":
			u, err := url.Parse(p.URL)
			if err != nil || !u.IsAbs() || u.Host == "" {
				return nil, fmt.Errorf("the elicitation URL %q is not an absolute URL", p.URL)
			}
			return needURL, nil
		}
		return nil, fmt.Errorf("unknown elicitation mode %q", p.Mode)
	case MethodCreateMessage:
		var p struct {
			Messages  []json.RawMessage `json:"messages"`
			MaxTokens int               `json:"maxTokens"`
			Tools     []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(pj, &p); err != nil {
			return nil, fmt.Errorf("malformed sampling params: %v", err)
		}
		if len(p.Messages) == 0 {
			return nil, fmt.Errorf("a sampling request needs at least one message")
		}
		if p.MaxTokens <= 0 {
			return nil, fmt.Errorf("a sampling request needs a positive maxTokens")
		}
		need := &ClientCapabilities{Sampling: &SamplingCapabilities{}}
		if len(p.Tools) > 0 {
			need.Sampling.Tools = map[string]any{}
		}
		return need, nil
	case MethodListRoots:
		return needRoots, nil
	}
	return nil, fmt.Errorf("method %q cannot be an input request", ir.Method)
}
