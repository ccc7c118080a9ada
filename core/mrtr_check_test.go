package core_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

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
