package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

// allCaps declares every client capability.
var allCaps = map[string]any{
	"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}},
	"sampling":    map[string]any{"tools": map[string]any{}},
	"roots":       map[string]any{},
}

type nameForm struct {
	Name string `json:"name"`
}

var nameSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"]}`)

// seen records what handlers observed, by tool.
type seen struct {
	mu    sync.Mutex
	state map[string]string
	input map[string][]string
}

func (s *seen) record(tool string, in *core.InputResponses, keys ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state[tool] = in.State()
	var vis []string
	for _, k := range keys {
		if _, ok := in.Raw(k); ok {
			vis = append(vis, k)
		}
	}
	s.input[tool] = append(vis, fmt.Sprintf("len=%d", in.Len()))
}

func (s *seen) get(tool string) (string, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state[tool], s.input[tool]
}

// newMRTRServer registers tools, a prompt and a resource that ask for every
// kind of input.
func newMRTRServer(t testing.TB, opts *core.ServerOptions) (*core.Server, *seen) {
	t.Helper()
	sn := &seen{state: map[string]string{}, input: map[string][]string{}}
	srv := core.NewServer(testImpl, opts)
	core.AddTool(srv, &core.Tool{Name: "form_ask", Description: "Asks for a name."},
		func(ctx context.Context, req *core.CallToolRequest, _ map[string]any) (string, error) {
			sn.record("form_ask", req.Input, "user_name", "extra", "other")
			if f, ok := core.Accepted[nameForm](req.Input, "user_name"); ok && f.Name != "" {
				return "Hello, " + f.Name + "!", nil
			}
			return "", core.InputRequired(core.InputRequests{"user_name": core.ElicitForm("What is your name?", nameSchema)}, "")
		})
	core.AddTool(srv, &core.Tool{Name: "url_ask", Description: "Asks to open a URL."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			if r, ok := req.Input.Elicitation("auth"); ok {
				return "action " + r.Action, nil
			}
			return "", core.InputRequired(core.InputRequests{"auth": core.ElicitURL("Authorize access", "https://auth.example.com/start?x=1")}, "")
		})
	core.AddTool(srv, &core.Tool{Name: "sample_ask", Description: "Asks the model."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			if r, ok := req.Input.Sampling("capital"); ok {
				return "model said " + r.Text() + " (" + r.Model + ")", nil
			}
			return "", core.InputRequired(core.InputRequests{"capital": core.SampleText("What is the capital of France?", 100)}, "")
		})
	core.AddTool(srv, &core.Tool{Name: "roots_ask", Description: "Asks for roots."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			if r, ok := req.Input.Roots("roots"); ok {
				var uris []string
				for _, x := range r.Roots {
					uris = append(uris, x.URI)
				}
				return "roots " + strings.Join(uris, ","), nil
			}
			return "", core.InputRequired(core.InputRequests{"roots": core.ListRoots()}, "")
		})
	core.AddTool(srv, &core.Tool{Name: "multi", Description: "Asks for everything at once."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			f, ok1 := core.Accepted[nameForm](req.Input, "user_name")
			s, ok2 := req.Input.Sampling("greeting")
			r, ok3 := req.Input.Roots("client_roots")
			if ok1 && ok2 && ok3 && req.Input.State() == "multi-state" {
				return fmt.Sprintf("%s/%s/%d", f.Name, s.Text(), len(r.Roots)), nil
			}
			return "", core.InputRequired(core.InputRequests{
				"user_name":    core.ElicitForm("Name?", nameSchema),
				"greeting":     core.SampleText("Say hi", 10),
				"client_roots": core.ListRoots(),
			}, "multi-state")
		})
	core.AddTool(srv, &core.Tool{Name: "multi_round", Description: "Two questions, one per round."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			st := req.Input.State()
			switch {
			case st == "":
				return "", core.InputRequired(core.InputRequests{"step1": core.ElicitForm("Step 1: name?", nameSchema)}, "round1")
			case st == "round1":
				f, ok := core.Accepted[nameForm](req.Input, "step1")
				if !ok {
					return "", core.InputRequired(core.InputRequests{"step1": core.ElicitForm("Step 1: name?", nameSchema)}, "round1")
				}
				return "", core.InputRequired(core.InputRequests{"step2": core.ElicitForm("Step 2: color?",
					json.RawMessage(`{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`))}, "round2:"+f.Name)
			case strings.HasPrefix(st, "round2:"):
				c, ok := core.Accepted[struct {
					Color string `json:"color"`
				}](req.Input, "step2")
				if !ok {
					return "", fmt.Errorf("no color")
				}
				return strings.TrimPrefix(st, "round2:") + " likes " + c.Color, nil
			}
			return "", fmt.Errorf("bad state %q", st)
		})
	core.AddTool(srv, &core.Tool{Name: "stateful", Description: "Returns its state."},
		func(ctx context.Context, req *core.CallToolRequest, in map[string]any) (string, error) {
			sn.record("stateful", req.Input, "k", "x")
			if req.Input.State() != "" {
				return "state seen", nil
			}
			st, _ := in["state"].(string)
			return "", core.InputRequired(core.InputRequests{"k": confirmForm("ok?")}, st)
		})
	core.AddTool(srv, &core.Tool{Name: "stateful_twin", Description: "Same as stateful."},
		func(ctx context.Context, req *core.CallToolRequest, in map[string]any) (string, error) {
			if req.Input.State() != "" {
				return "twin state seen", nil
			}
			return "", core.InputRequired(nil, "twin")
		})
	core.AddTool(srv, &core.Tool{Name: "probe", Description: "Reports what Accepted sees."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			if req.Input.State() == "" {
				return "", core.InputRequired(core.InputRequests{"k": core.ElicitForm("Name?", nameSchema)}, "probe")
			}
			f, ok := core.Accepted[nameForm](req.Input, "k")
			return fmt.Sprintf("%v %q", ok, f.Name), nil
		})
	srv.AddPrompt(&core.Prompt{Name: "ask_prompt", Description: "Asks for context."},
		func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
			if f, ok := core.Accepted[struct {
				Context string `json:"context"`
			}](req.Input, "user_context"); ok {
				return &core.GetPromptResult{Messages: []core.PromptMessage{{Role: core.RoleUser, Content: &core.TextContent{Text: "Context: " + f.Context}}}}, nil
			}
			return nil, core.InputRequired(core.InputRequests{"user_context": core.ElicitForm("Context?",
				json.RawMessage(`{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`))}, "")
		})
	srv.AddResource(&core.Resource{URI: "test://secret", Name: "secret"},
		func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			if r, ok := req.Input.Elicitation("consent"); ok && r.Action == "accept" {
				return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: "the secret"}}}, nil
			}
			return nil, core.InputRequired(core.InputRequests{"consent": confirmForm("Read the secret?")}, "")
		})
	return srv, sn
}

// round1 sends r and returns the input_required result, validated.
func round1(t *testing.T, h http.Handler, r *testReq) map[string]any {
	t.Helper()
	res := r.do(t, h)
	out := res.result(t)
	if str(out["resultType"]) != "input_required" {
		t.Fatalf("resultType = %v, want input_required: %s", out["resultType"], res.Body)
	}
	validateSpec(t, modernVersion, "InputRequiredResult", res.resultRaw(t))
	if reqs, ok := out["inputRequests"].(map[string]any); ok {
		validateSpec(t, modernVersion, "InputRequests", toJSON(t, reqs))
		for k, ir := range reqs {
			def := map[string]string{core.MethodElicit: "ElicitRequest", core.MethodCreateMessage: "CreateMessageRequest",
				core.MethodListRoots: "ListRootsRequest"}[str(at(ir, "method"))]
			if def == "" {
				t.Errorf("input request %s: method %v", k, at(ir, "method"))
				continue
			}
			validateSpec(t, modernVersion, def, toJSON(t, ir))
		}
	}
	if has(out, "ttlMs") || has(out, "cacheScope") {
		t.Errorf("cache hint on input_required: %s", res.Body)
	}
	return out
}

// retry re-sends r (with a new id) with the answers and the state.
func retry(r *testReq, id any, state any, responses map[string]any) *testReq {
	r.withMsg("id", id)
	if state != nil {
		r.withParam("requestState", state)
	}
	if responses != nil {
		r.withParam("inputResponses", responses)
	}
	return r
}

func accept(content map[string]any) map[string]any {
	return map[string]any{"action": "accept", "content": content}
}

var samplingAnswer = map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Paris"}, "model": "test-model", "stopReason": "endTurn"}
var rootsAnswer = map[string]any{"roots": []any{map[string]any{"uri": "file:///test/root", "name": "Test Root"}}}

// TestMRTRRoundTrips runs every kind of input request through a full round
// trip, for tools/call, prompts/get and resources/read (2026-07-28 basic/patterns/mrtr).
func TestMRTRRoundTrips(t *testing.T) {
	t.Parallel()
	srv, _ := newMRTRServer(t, nil)
	cases := []struct {
		name    string
		req     func() *testReq
		key     string
		method  string
		answers map[string]any
		check   func(t *testing.T, res map[string]any)
	}{
		{"form", func() *testReq {
			return callReq(1, "form_ask", nil).withCaps(map[string]any{"elicitation": map[string]any{}})
		},
			"user_name", core.MethodElicit, map[string]any{"user_name": accept(map[string]any{"name": "Alice"})},
			func(t *testing.T, res map[string]any) { wantText(t, res, "Hello, Alice!") }},
		{"url", func() *testReq {
			return callReq(1, "url_ask", nil).withCaps(map[string]any{"elicitation": map[string]any{"url": map[string]any{}}})
		}, "auth", core.MethodElicit, map[string]any{"auth": map[string]any{"action": "accept"}},
			func(t *testing.T, res map[string]any) { wantText(t, res, "action accept") }},
		{"sampling", func() *testReq {
			return callReq(1, "sample_ask", nil).withCaps(map[string]any{"sampling": map[string]any{}})
		},
			"capital", core.MethodCreateMessage, map[string]any{"capital": samplingAnswer},
			func(t *testing.T, res map[string]any) { wantText(t, res, "model said Paris (test-model)") }},
		{"roots", func() *testReq {
			return callReq(1, "roots_ask", nil).withCaps(map[string]any{"roots": map[string]any{}})
		},
			"roots", core.MethodListRoots, map[string]any{"roots": rootsAnswer},
			func(t *testing.T, res map[string]any) { wantText(t, res, "roots file:///test/root") }},
		{"prompt", func() *testReq {
			return mreq(1, "prompts/get", map[string]any{"name": "ask_prompt"}).withCaps(map[string]any{"elicitation": map[string]any{}})
		}, "user_context", core.MethodElicit, map[string]any{"user_context": accept(map[string]any{"context": "test context"})},
			func(t *testing.T, res map[string]any) {
				if got := str(at(res, "messages", 0, "content", "text")); got != "Context: test context" {
					t.Errorf("prompt text %q", got)
				}
			}},
		{"resource", func() *testReq {
			return mreq(1, "resources/read", map[string]any{"uri": "test://secret"}).withCaps(map[string]any{"elicitation": map[string]any{}})
		}, "consent", core.MethodElicit, map[string]any{"consent": accept(map[string]any{"ok": true})},
			func(t *testing.T, res map[string]any) {
				if str(at(res, "contents", 0, "text")) != "the secret" || !has(res, "ttlMs") {
					t.Errorf("resource result %v", res)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			first := round1(t, srv, c.req())
			if got := str(at(first, "inputRequests", c.key, "method")); got != c.method {
				t.Fatalf("inputRequests.%s.method = %q, want %s", c.key, got, c.method)
			}
			state, ok := first["requestState"].(string)
			if !ok || state == "" {
				t.Fatalf("no requestState")
			}
			r := retry(c.req(), 2, state, c.answers).do(t, srv)
			res := r.result(t)
			if str(res["resultType"]) != "complete" {
				t.Fatalf("retry: %s", r.Body)
			}
			r.wantID(t, "2")
			c.check(t, res)
		})
	}
	t.Run("url params", func(t *testing.T) {
		first := round1(t, srv, callReq(1, "url_ask", nil).withCaps(allCaps))
		p := at(first, "inputRequests", "auth", "params")
		if str(at(p, "mode")) != "url" || str(at(p, "url")) != "https://auth.example.com/start?x=1" || has(p, "elicitationId") {
			t.Errorf("URL elicitation params = %v", p)
		}
	})
	t.Run("multiple inputs with state", func(t *testing.T) {
		first := round1(t, srv, callReq(1, "multi", nil).withCaps(allCaps))
		if n := len(first["inputRequests"].(map[string]any)); n != 3 {
			t.Fatalf("%d input requests", n)
		}
		r := retry(callReq(1, "multi", nil).withCaps(allCaps), "r2", first["requestState"], map[string]any{
			"user_name": accept(map[string]any{"name": "Bo"}), "greeting": samplingAnswer, "client_roots": rootsAnswer,
		}).do(t, srv)
		wantText(t, r.result(t), "Bo/Paris/1")
	})
	t.Run("multi round", func(t *testing.T) {
		caps := map[string]any{"elicitation": map[string]any{}}
		first := round1(t, srv, callReq(1, "multi_round", nil).withCaps(caps))
		s1 := str(first["requestState"])
		second := round1(t, srv, retry(callReq(1, "multi_round", nil).withCaps(caps), 2, s1,
			map[string]any{"step1": accept(map[string]any{"name": "Ann"})}))
		s2 := str(second["requestState"])
		if s2 == s1 || !has(second, "inputRequests", "step2") {
			t.Fatalf("second round: state changed %v, inputRequests %v", s2 != s1, second["inputRequests"])
		}
		r := retry(callReq(1, "multi_round", nil).withCaps(caps), 3, s2,
			map[string]any{"step2": accept(map[string]any{"color": "blue"})}).do(t, srv)
		wantText(t, r.result(t), "Ann likes blue")
		// The first state cannot be combined with the second round's answer:
		// the handler is back in round 1 and asks again.
		again := round1(t, srv, retry(callReq(1, "multi_round", nil).withCaps(caps), 4, s1,
			map[string]any{"step2": accept(map[string]any{"color": "blue"})}))
		if !has(again, "inputRequests", "step1") {
			t.Errorf("want step1 asked again: %v", again)
		}
	})
	t.Run("missing answer asks again", func(t *testing.T) {
		caps := map[string]any{"elicitation": map[string]any{}}
		first := round1(t, srv, callReq(1, "form_ask", nil).withCaps(caps))
		for _, answers := range []any{
			map[string]any{"wrong_key": accept(map[string]any{"name": "x"})},
			map[string]any{"user_name": 12345},
			map[string]any{"user_name": nil},
			nil,
		} {
			r := callReq(2, "form_ask", nil).withCaps(caps).withParam("requestState", first["requestState"]).withParam("inputResponses", answers)
			round1(t, srv, r)
		}
	})
}

func wantText(t *testing.T, res map[string]any, want string) {
	t.Helper()
	if got := textOf(res); got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
}

// TestAccepted checks Accepted[T]: absent, declined, cancelled or
// non-convertible answers report false (2026-07-28 basic/patterns/mrtr).
func TestAccepted(t *testing.T) {
	t.Parallel()
	srv, _ := newMRTRServer(t, nil)
	caps := map[string]any{"elicitation": map[string]any{}}
	state := str(round1(t, srv, callReq(1, "probe", nil).withCaps(caps))["requestState"])
	for _, c := range []struct {
		name   string
		answer any // nil: absent
		want   string
	}{
		{"accepted", accept(map[string]any{"name": "Zoë"}), `true "Zoë"`},
		{"absent", nil, `false ""`},
		{"declined", map[string]any{"action": "decline"}, `false ""`},
		{"declined with content", map[string]any{"action": "decline", "content": map[string]any{"name": "x"}}, `false ""`},
		{"cancelled", map[string]any{"action": "cancel"}, `false ""`},
		{"accept without content", map[string]any{"action": "accept"}, `false ""`},
		{"non-convertible", accept(map[string]any{"name": 5}), `false ""`},
		{"unknown action", map[string]any{"action": "maybe", "content": map[string]any{"name": "x"}}, `false ""`},
		{"not an object", "accept", `false ""`},
		{"null", json.RawMessage("null"), `false ""`},
	} {
		t.Run(c.name, func(t *testing.T) {
			answers := map[string]any{}
			if c.answer != nil {
				answers["k"] = c.answer
			}
			r := callReq(2, "probe", nil).withCaps(caps).withParam("requestState", state).withParam("inputResponses", answers).do(t, srv)
			wantText(t, r.result(t), c.want)
		})
	}
}

const b64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// TestMRTRLegacyWithoutSession checks that a legacy call without a session
// of a tool that asks gets a JSON-RPC error, never an input_required result
// (2025-11-25 client/elicitation).
func TestMRTRLegacyWithoutSession(t *testing.T) {
	t.Parallel()
	srv, _ := newMRTRServer(t, nil)
	for _, v := range []string{core.ProtocolVersion20251125, core.ProtocolVersion20250618, ""} {
		for _, req := range []*testReq{
			lreq(1, "tools/call", map[string]any{"name": "form_ask", "arguments": map[string]any{}}, v, ""),
			lreq(1, "prompts/get", map[string]any{"name": "ask_prompt"}, v, ""),
			lreq(1, "resources/read", map[string]any{"uri": "test://secret"}, v, ""),
		} {
			r := req.do(t, srv)
			r.wantError(t, http.StatusOK, core.CodeInternalError)
			if strings.Contains(string(r.Body), "input_required") || strings.Contains(string(r.Body), "resultType") {
				t.Errorf("legacy answer leaks MRTR: %s", r.Body)
			}
		}
	}
}
