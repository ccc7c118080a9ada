package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/store/memory"
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

// TestInputRequiredChecks checks that malformed input requests are refused
// with -32603 and a clear message before anything is sent (2026-07-28
// basic/patterns/mrtr).
func TestInputRequiredChecks(t *testing.T) {
	t.Parallel()
	form := func(props string, extra string) *core.InputRequest {
		return core.ElicitForm("Fill in", json.RawMessage(`{"type":"object","properties":{`+props+`}`+extra+`}`))
	}
	cases := map[string]struct {
		ir   *core.InputRequiredError
		want string // part of the message
	}{
		"nothing":                 {&core.InputRequiredError{}, "inputRequests or requestState"},
		"blank message":           {&core.InputRequiredError{Requests: core.InputRequests{"a": core.ElicitForm("  \t", nameSchema)}}, "blank"},
		"required not a property": {&core.InputRequiredError{Requests: core.InputRequests{"a": form(`"y":{"type":"string"}`, `,"required":["x"]`)}}, `"x"`},
		"inverted length":         {&core.InputRequiredError{Requests: core.InputRequests{"a": form(`"s":{"type":"string","minLength":5,"maxLength":2}`, ``)}}, "inverted"},
		"negative length":         {&core.InputRequiredError{Requests: core.InputRequests{"a": form(`"s":{"type":"string","minLength":-1}`, ``)}}, "negative"},
		"inverted value":          {&core.InputRequiredError{Requests: core.InputRequests{"a": form(`"n":{"type":"integer","minimum":10,"maximum":1}`, ``)}}, "inverted"},
		"inverted items":          {&core.InputRequiredError{Requests: core.InputRequests{"a": form(`"m":{"type":"array","items":{"type":"string","enum":["a"]},"minItems":3,"maxItems":1}`, ``)}}, "inverted"},
		"negative items":          {&core.InputRequiredError{Requests: core.InputRequests{"a": form(`"m":{"type":"array","items":{"type":"string","enum":["a"]},"maxItems":-2}`, ``)}}, "negative"},
		"empty enum":              {&core.InputRequiredError{Requests: core.InputRequests{"a": form(`"e":{"type":"string","enum":[]}`, ``)}}, "empty enum"},
		"empty multi-select enum": {&core.InputRequiredError{Requests: core.InputRequests{"a": form(`"m":{"type":"array","items":{"type":"string","enum":[]}}`, ``)}}, "empty enum"},
		"default outside enum":    {&core.InputRequiredError{Requests: core.InputRequests{"a": form(`"e":{"type":"string","enum":["a","b"],"default":"c"}`, ``)}}, "default"},
		"default outside oneOf":   {&core.InputRequiredError{Requests: core.InputRequests{"a": form(`"e":{"type":"string","oneOf":[{"const":"a","title":"A"}],"default":"z"}`, ``)}}, "default"},
		"enumNames in 2026":       {&core.InputRequiredError{Requests: core.InputRequests{"a": form(`"e":{"type":"string","enum":["a"],"enumNames":["A"]}`, ``)}}, "enumNames"},
		"nested object":           {&core.InputRequiredError{Requests: core.InputRequests{"a": form(`"o":{"type":"object"}`, ``)}}, "object"},
		"not an object schema":    {&core.InputRequiredError{Requests: core.InputRequests{"a": core.ElicitForm("Fill in", json.RawMessage(`{"type":"string"}`))}}, "object"},
		"schema not JSON":         {&core.InputRequiredError{Requests: core.InputRequests{"a": core.ElicitForm("Fill in", json.RawMessage(`{`))}}, "object"},
		"url blank":               {&core.InputRequiredError{Requests: core.InputRequests{"a": core.ElicitURL("Open", "")}}, "URL"},
		"url relative":            {&core.InputRequiredError{Requests: core.InputRequests{"a": core.ElicitURL("Open", "/auth/start")}}, "absolute"},
		"url without host":        {&core.InputRequiredError{Requests: core.InputRequests{"a": core.ElicitURL("Open", "https:///x")}}, "absolute"},
		"url message blank":       {&core.InputRequiredError{Requests: core.InputRequests{"a": core.ElicitURL("", "https://example.com")}}, "blank"},
		"sampling no messages":    {&core.InputRequiredError{Requests: core.InputRequests{"a": core.Sample(&core.CreateMessageParams{MaxTokens: 10})}}, "message"},
		"sampling no maxTokens":   {&core.InputRequiredError{Requests: core.InputRequests{"a": core.SampleText("hi", 0)}}, "maxTokens"},
		"unknown method":          {&core.InputRequiredError{Requests: core.InputRequests{"a": {Method: "ping"}}}, "ping"},
		"nil request":             {&core.InputRequiredError{Requests: core.InputRequests{"a": nil}}, `"a"`},
		"unknown mode":            {&core.InputRequiredError{Requests: core.InputRequests{"a": {Method: core.MethodElicit, Params: map[string]any{"mode": "telepathy", "message": "m"}}}}, "telepathy"},
	}
	srv := core.NewServer(testImpl, nil)
	var current atomic.Pointer[core.InputRequiredError]
	var mu sync.Mutex
	core.AddTool(srv, &core.Tool{Name: "checker", Description: "Asks what the test says."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			return "", current.Load()
		})
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			mu.Lock()
			defer mu.Unlock()
			current.Store(c.ir)
			r := callReq(1, "checker", nil).withCaps(allCaps).do(t, srv)
			e := r.wantError(t, http.StatusOK, core.CodeInternalError)
			if msg := str(e["message"]); !strings.Contains(msg, c.want) {
				t.Errorf("message %q does not mention %q", msg, c.want)
			}
			r.wantID(t, "1")
		})
	}
	t.Run("valid shapes pass", func(t *testing.T) {
		mu.Lock()
		defer mu.Unlock()
		current.Store(&core.InputRequiredError{Requests: core.InputRequests{
			"f": form(`"s":{"type":"string","minLength":1,"maxLength":5,"default":"a"},"n":{"type":"number","minimum":0,"maximum":0},
				"e":{"type":"string","enum":["a","b"],"default":"b"},"t":{"type":"string","oneOf":[{"const":"x","title":"X"}]},
				"m":{"type":"array","items":{"type":"string","enum":["a","b"]},"minItems":1,"maxItems":2},
				"ma":{"type":"array","items":{"anyOf":[{"const":"a","title":"A"}]}},"b":{"type":"boolean","default":true}`, `,"required":["s"]`),
			"u": core.ElicitURL("Open", "https://example.com/x"),
		}})
		round1(t, srv, callReq(1, "checker", nil).withCaps(allCaps))
		current.Store(&core.InputRequiredError{State: "only state"})
		res := round1(t, srv, callReq(1, "checker", nil))
		if has(res, "inputRequests") || str(res["requestState"]) == "" {
			t.Errorf("state-only round: %v", res)
		}
	})
}

// TestMRTRCapabilities checks that input requests the client did not
// declare in this request are refused with -32021 naming what is missing
// (2026-07-28 basic/patterns/mrtr).
func TestMRTRCapabilities(t *testing.T) {
	t.Parallel()
	srv, _ := newMRTRServer(t, nil)
	el := func(m map[string]any) map[string]any { return map[string]any{"elicitation": m} }
	cases := []struct {
		name string
		tool string
		caps map[string]any
		want []string // requiredCapabilities, any of
	}{
		// {"elicitation":{}} means form mode (2026-07-28 client/elicitation), so it names form too.
		{"form without elicitation", "form_ask", map[string]any{"sampling": map[string]any{}}, []string{`{"elicitation":{"form":{}}}`, `{"elicitation":{}}`}},
		{"form with url-only elicitation", "form_ask", el(map[string]any{"url": map[string]any{}}), []string{`{"elicitation":{"form":{}}}`, `{"elicitation":{}}`}},
		{"url with empty elicitation", "url_ask", el(map[string]any{}), []string{`{"elicitation":{"url":{}}}`}},
		{"url with form elicitation", "url_ask", el(map[string]any{"form": map[string]any{}}), []string{`{"elicitation":{"url":{}}}`}},
		{"sampling", "sample_ask", el(map[string]any{}), []string{`{"sampling":{}}`}},
		{"roots", "roots_ask", map[string]any{}, []string{`{"roots":{}}`}},
		{"several", "multi", map[string]any{"sampling": map[string]any{}}, []string{`{"elicitation":{"form":{}},"roots":{}}`, `{"elicitation":{},"roots":{}}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := callReq(1, c.tool, nil).withCaps(c.caps).do(t, srv)
			e := r.wantError(t, http.StatusBadRequest, core.CodeMissingRequiredClientCapability)
			rc := at(e, "data", "requiredCapabilities")
			if _, ok := rc.(map[string]any); !ok {
				t.Fatalf("requiredCapabilities is not an object: %v", rc)
			}
			match := false
			for _, w := range c.want {
				match = match || jsonEq(t, toJSON(t, rc), []byte(w))
			}
			if !match {
				t.Errorf("requiredCapabilities = %s, want %s", toJSON(t, rc), strings.Join(c.want, " or "))
			}
		})
	}
	t.Run("sampling with tools", func(t *testing.T) {
		s := core.NewServer(testImpl, nil)
		core.AddTool(s, &core.Tool{Name: "st", Description: "Samples with tools."},
			func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
				return "", core.InputRequired(core.InputRequests{"s": core.Sample(&core.CreateMessageParams{
					Messages:  []core.SamplingMessage{{Role: core.RoleUser, Content: &core.TextContent{Text: "hi"}}},
					MaxTokens: 10, Tools: []*core.Tool{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}},
				})}, "")
			})
		e := callReq(1, "st", nil).withCaps(map[string]any{"sampling": map[string]any{}}).do(t, s).
			wantError(t, http.StatusBadRequest, core.CodeMissingRequiredClientCapability)
		if got := toJSON(t, at(e, "data", "requiredCapabilities")); !jsonEq(t, got, []byte(`{"sampling":{"tools":{}}}`)) {
			t.Errorf("requiredCapabilities = %s", got)
		}
		round1(t, s, callReq(1, "st", nil).withCaps(map[string]any{"sampling": map[string]any{"tools": map[string]any{}}}))
	})
	t.Run("capability-check scenario: sampling only", func(t *testing.T) {
		// The conformance scenario: only sampling declared, the tool asks
		// for sampling only.
		round1(t, srv, callReq(1, "sample_ask", nil).withCaps(map[string]any{"sampling": map[string]any{}}))
	})
}

// tokenAndBinding runs a first round of "stateful" and returns the token.
func statefulToken(t *testing.T, h http.Handler, args map[string]any, ctx context.Context) string {
	t.Helper()
	r := callReq(1, "stateful", args).withCaps(allCaps)
	if ctx != nil {
		r.withContext(ctx)
	}
	s, ok := round1(t, h, r)["requestState"].(string)
	if !ok || s == "" {
		t.Fatal("no requestState")
	}
	return s
}

// wantInvalidState checks the one answer to a state that fails verification.
func wantInvalidState(t *testing.T, r *resp) {
	t.Helper()
	e := r.wantError(t, http.StatusOK, core.CodeInvalidParams)
	if str(e["message"]) != "Invalid or expired requestState" || str(at(e, "data", "reason")) != "invalid_request_state" {
		t.Errorf("error = %v, want the invalid state error", e)
	}
}

const b64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// TestRequestStateTampering changes every byte position of a sealed state
// in turn (to the next character of the base64url alphabet, or a dot to a
// letter): every variant must be rejected (2026-07-28 basic/patterns/mrtr).
func TestRequestStateTampering(t *testing.T) {
	t.Parallel()
	srv, _ := newMRTRServer(t, nil)
	args := map[string]any{"state": "plain", "x": 1}
	token := statefulToken(t, srv, args, nil)
	ok := retry(callReq(2, "stateful", args).withCaps(allCaps), 2, token, map[string]any{"k": accept(map[string]any{"ok": true})}).do(t, srv)
	wantText(t, ok.result(t), "state seen")
	var accepted []int
	for i := 0; i < len(token); i++ {
		b := []byte(token)
		c := b[i]
		if j := strings.IndexByte(b64url, c); j >= 0 {
			b[i] = b64url[(j+1)%len(b64url)]
		} else {
			b[i] = 'A'
		}
		r := retry(callReq(3, "stateful", args).withCaps(allCaps), 3, string(b), nil).do(t, srv)
		if has(r.final(t), "result") {
			accepted = append(accepted, i)
			continue
		}
		wantInvalidState(t, r)
	}
	if len(accepted) > 0 {
		t.Errorf("token of %d bytes: variants accepted at positions %v (the last is %d): e.g. %q",
			len(token), accepted, len(token)-1, token[:len(token)-1]+"*")
	}
	for _, bad := range []string{"", "v1", "v1...", token + "-TAMPERED", token + ".", "v2" + token[2:], strings.ToUpper(token),
		token[:len(token)/2], "x" + token} {
		wantInvalidState(t, retry(callReq(4, "stateful", args).withCaps(allCaps), 4, bad, nil).do(t, srv))
	}
}

// TestRequestStateBinding checks that a state only verifies for the call it
// was issued for: method, target, arguments (in any key order) and
// principal.
func TestRequestStateBinding(t *testing.T) {
	t.Parallel()
	srv, _ := newMRTRServer(t, nil)
	args := map[string]any{"state": "s", "a": 1, "b": map[string]any{"c": []any{1, "x"}, "d": true}}
	token := statefulToken(t, srv, args, nil)
	answer := map[string]any{"k": accept(map[string]any{"ok": true})}

	// Same arguments, another key order and number spelling: accepted.
	reordered := `{"b":{"d":true,"c":[1.0,"x"]},"a":1,"state":"s"}`
	r := retry(callReq(2, "stateful", json.RawMessage(reordered)).withCaps(allCaps), 2, token, answer).do(t, srv)
	wantText(t, r.result(t), "state seen")

	for name, req := range map[string]*testReq{
		"other tool":         callReq(3, "stateful_twin", args),
		"other arguments":    callReq(3, "stateful", map[string]any{"state": "s", "a": 2, "b": args["b"]}),
		"extra argument":     callReq(3, "stateful", map[string]any{"state": "s", "a": 1, "b": args["b"], "z": 0}),
		"no arguments":       callReq(3, "stateful", nil),
		"other method":       mreq(3, "prompts/get", map[string]any{"name": "ask_prompt"}),
		"other method (uri)": mreq(3, "resources/read", map[string]any{"uri": "test://secret"}),
	} {
		t.Run(name, func(t *testing.T) {
			wantInvalidState(t, retry(req.withCaps(allCaps), 3, token, answer).do(t, srv))
		})
	}

	t.Run("principal", func(t *testing.T) {
		p1 := &core.Principal{Issuer: "https://issuer.example", ClientID: "c1", Subject: "alice", Scopes: []string{"read"}}
		ctx1 := core.NewContextWithPrincipal(context.Background(), p1)
		tok := statefulToken(t, srv, args, ctx1)
		same := &core.Principal{Issuer: p1.Issuer, ClientID: p1.ClientID, Subject: p1.Subject, Scopes: []string{"write"}}
		r := retry(callReq(2, "stateful", args).withCaps(allCaps), 2, tok, answer).withContext(core.NewContextWithPrincipal(context.Background(), same)).do(t, srv)
		wantText(t, r.result(t), "state seen")
		for name, p := range map[string]*core.Principal{
			"anonymous":     nil,
			"other subject": {Issuer: p1.Issuer, ClientID: p1.ClientID, Subject: "mallory"},
			"other client":  {Issuer: p1.Issuer, ClientID: "c2", Subject: p1.Subject},
			"other issuer":  {Issuer: "https://evil.example", ClientID: p1.ClientID, Subject: p1.Subject},
		} {
			ctx := context.Background()
			if p != nil {
				ctx = core.NewContextWithPrincipal(ctx, p)
			}
			r := retry(callReq(3, "stateful", args).withCaps(allCaps), 3, tok, answer).withContext(ctx).do(t, srv)
			if has(r.final(t), "result") {
				t.Errorf("%s: a state sealed for alice was accepted", name)
				continue
			}
			wantInvalidState(t, r)
		}
		// An anonymous state is not valid for an authenticated caller.
		r = retry(callReq(4, "stateful", args).withCaps(allCaps), 4, token, answer).withContext(ctx1).do(t, srv)
		wantInvalidState(t, r)
	})
}

// TestRequestStateContent checks that handlers see exactly the state they
// returned, and only the answers to the keys they asked.
func TestRequestStateContent(t *testing.T) {
	t.Parallel()
	srv, sn := newMRTRServer(t, nil)
	for _, st := range []string{"plain", "ünïcödé \"quoted\"\n\ttabs <>&", strings.Repeat("x", 4096), `{"json":[1,2]}`, "v1.a.b.c"} {
		args := map[string]any{"state": st}
		tok := statefulToken(t, srv, args, nil)
		r := retry(callReq(2, "stateful", args).withCaps(allCaps), 2, tok, map[string]any{
			"k": accept(map[string]any{"ok": true}), "x": "not asked", "unknown": map[string]any{"z": 1},
		}).do(t, srv)
		wantText(t, r.result(t), "state seen")
		gotState, visible := sn.get("stateful")
		if gotState != st {
			t.Errorf("handler saw state %q, want %q", gotState, st)
		}
		if strings.Join(visible, " ") != "k len=1" {
			t.Errorf("visible answers %v, want only k (the key asked)", visible)
		}
	}
	t.Run("answers without requestState are not visible", func(t *testing.T) {
		// No round asked for anything: there is nothing to answer.
		r := callReq(1, "form_ask", nil).withCaps(allCaps).withParam("inputResponses", map[string]any{
			"user_name": accept(map[string]any{"name": "Mallory"}), "extra": 1,
		}).do(t, srv)
		res := r.result(t)
		_, visible := sn.get("form_ask")
		if str(res["resultType"]) != "input_required" || strings.Join(visible, " ") != "len=0" {
			t.Errorf("a first round with unsolicited inputResponses: result %s, handler saw %v", r.Body, visible)
		}
	})
	t.Run("extra keys ignored", func(t *testing.T) {
		first := round1(t, srv, callReq(1, "form_ask", nil).withCaps(allCaps))
		r := retry(callReq(2, "form_ask", nil).withCaps(allCaps), 2, first["requestState"], map[string]any{
			"user_name": accept(map[string]any{"name": "Al"}), "extra": accept(nil), "other": 1,
		}).do(t, srv)
		wantText(t, r.result(t), "Hello, Al!")
		if _, visible := sn.get("form_ask"); strings.Join(visible, " ") != "user_name len=1" {
			t.Errorf("visible = %v", visible)
		}
	})
}

// TestRequestStateExpiry uses a fake clock: a state is valid until its TTL
// has passed, and each round issues a fresh one.
func TestRequestStateExpiry(t *testing.T) {
	t.Parallel()
	var now atomic.Int64
	now.Store(time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC).UnixNano())
	opts := &core.ServerOptions{StateTTL: time.Minute}
	core.SetClock(opts, func() time.Time { return time.Unix(0, now.Load()) })
	srv, _ := newMRTRServer(t, opts)
	caps := map[string]any{"elicitation": map[string]any{}}
	s1 := str(round1(t, srv, callReq(1, "multi_round", nil).withCaps(caps))["requestState"])
	now.Add(int64(59 * time.Second))
	second := round1(t, srv, retry(callReq(2, "multi_round", nil).withCaps(caps), 2, s1,
		map[string]any{"step1": accept(map[string]any{"name": "Ann"})}))
	s2 := str(second["requestState"])
	now.Add(int64(2 * time.Second)) // s1 expired, s2 renewed
	wantInvalidState(t, retry(callReq(3, "multi_round", nil).withCaps(caps), 3, s1,
		map[string]any{"step1": accept(map[string]any{"name": "Ann"})}).do(t, srv))
	r := retry(callReq(4, "multi_round", nil).withCaps(caps), 4, s2, map[string]any{"step2": accept(map[string]any{"color": "red"})}).do(t, srv)
	wantText(t, r.result(t), "Ann likes red")
	now.Add(int64(time.Minute))
	wantInvalidState(t, retry(callReq(5, "multi_round", nil).withCaps(caps), 5, s2,
		map[string]any{"step2": accept(map[string]any{"color": "red"})}).do(t, srv))
}

// TestRequestStateKeyRotation rotates keys with store/memory.Keys.
func TestRequestStateKeyRotation(t *testing.T) {
	t.Parallel()
	old := core.Key{ID: "k-2026-07", Secret: []byte(strings.Repeat("o", 32))}
	next := core.Key{ID: "k-2026-08", Secret: []byte(strings.Repeat("n", 32))}
	keys, err := memory.NewKeys(old)
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := newMRTRServer(t, &core.ServerOptions{Keys: keys})
	args := map[string]any{"state": "s"}
	answer := map[string]any{"k": accept(map[string]any{"ok": true})}
	tokOld := statefulToken(t, srv, args, nil)
	if !strings.Contains(tokOld, "."+old.ID+".") {
		t.Fatalf("token %q does not name the signing key %s", tokOld, old.ID)
	}
	if err := keys.Put(next); err != nil {
		t.Fatal(err)
	}
	wantText(t, retry(callReq(2, "stateful", args).withCaps(allCaps), 2, tokOld, answer).do(t, srv).result(t), "state seen")
	tokNew := statefulToken(t, srv, args, nil)
	if !strings.Contains(tokNew, "."+next.ID+".") {
		t.Errorf("after rotation, token %q is not signed by %s", tokNew, next.ID)
	}
	keys.Remove(old.ID)
	wantInvalidState(t, retry(callReq(3, "stateful", args).withCaps(allCaps), 3, tokOld, answer).do(t, srv))
	wantText(t, retry(callReq(4, "stateful", args).withCaps(allCaps), 4, tokNew, answer).do(t, srv).result(t), "state seen")

	// Another server with the same keys verifies the state (replicas).
	replica, _ := newMRTRServer(t, &core.ServerOptions{Keys: keys})
	wantText(t, retry(callReq(5, "stateful", args).withCaps(allCaps), 5, tokNew, answer).do(t, replica).result(t), "state seen")
	// A server with other keys does not.
	stranger, _ := newMRTRServer(t, &core.ServerOptions{Keys: core.StaticKeys{{ID: next.ID, Secret: []byte(strings.Repeat("x", 32))}}})
	wantInvalidState(t, retry(callReq(6, "stateful", args).withCaps(allCaps), 6, tokNew, answer).do(t, stranger))

	t.Run("bad keys fail closed", func(t *testing.T) {
		for _, k := range []core.StaticKeys{{}, {{ID: "short", Secret: []byte("x")}}, {{ID: "bad id!", Secret: make([]byte, 32)}}} {
			s, _ := newMRTRServer(t, &core.ServerOptions{Keys: k})
			r := callReq(1, "stateful", args).withCaps(allCaps).do(t, s)
			r.wantError(t, http.StatusOK, core.CodeInternalError)
			if strings.Contains(string(r.Body), "key") {
				t.Errorf("key detail leaked: %s", r.Body)
			}
		}
	})
}

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
