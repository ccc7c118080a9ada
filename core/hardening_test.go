package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

// TestCapabilitiesNotSharedBetweenServers checks that a handler that changes
// its request's client capabilities changes nothing another server (or a
// later request) decides on: the other server still refuses a call that
// needs sampling with -32021 (issue 11, defect 5).
func TestCapabilitiesNotSharedBetweenServers(t *testing.T) {
	t.Parallel()
	a := core.NewServer(testImpl, nil)
	core.AddTool(a, &core.Tool{Name: "grant", Description: "Changes its own capabilities."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			req.ClientCapabilities.Sampling = &core.SamplingCapabilities{}
			if req.ClientCapabilities.Elicitation != nil {
				req.ClientCapabilities.Elicitation.Form = nil
				req.ClientCapabilities.Elicitation.URL = map[string]any{}
			}
			// The handler's own check still sees what the client declared.
			if err := req.RequireCapabilities(&core.ClientCapabilities{Sampling: &core.SamplingCapabilities{}}); err == nil {
				t.Errorf("RequireCapabilities believed the handler's change")
			}
			return "granted", nil
		})
	b := core.NewServer(testImpl, nil)
	core.AddTool(b, &core.Tool{Name: "needs_sampling", Description: "Needs sampling."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) { return "sampled", nil }, &core.ToolOptions{RequiredCapabilities: &core.ClientCapabilities{Sampling: &core.SamplingCapabilities{}}})
	core.AddTool(b, &core.Tool{Name: "needs_url", Description: "Needs URL elicitation."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			if err := req.RequireCapabilities(&core.ClientCapabilities{Elicitation: &core.ElicitationCapabilities{URL: map[string]any{}}}); err != nil {
				return "", err
			}
			return "url", nil
		})

	for _, caps := range []map[string]any{
		{}, // the shared empty value
		{"elicitation": map[string]any{"form": map[string]any{}}}, // a cached decoded value
	} {
		for i := 0; i < 2; i++ { // the second round hits the caches
			if got := textOf(callReq(1, "grant", nil).withCaps(caps).do(t, a).result(t)); got != "granted" {
				t.Fatalf("grant: %q", got)
			}
			callReq(2, "needs_sampling", nil).withCaps(caps).do(t, b).
				wantError(t, http.StatusBadRequest, core.CodeMissingRequiredClientCapability)
			callReq(3, "needs_url", nil).withCaps(caps).do(t, b).
				wantError(t, http.StatusBadRequest, core.CodeMissingRequiredClientCapability)
		}
	}
}

// treeNode is a recursive argument type.
type treeNode struct {
	Name     string     `json:"name"`
	Children []treeNode `json:"children,omitempty"`
}

type linked struct {
	Value int     `json:"value"`
	Next  *linked `json:"next,omitempty"`
}

// TestRecursiveTypeRefused checks that a recursive argument or result type is
// a clear registration panic, not a stack overflow that kills the process
// (issue 11, defect 7).
func TestRecursiveTypeRefused(t *testing.T) {
	t.Parallel()
	srv := core.NewServer(testImpl, nil)
	msg := mustPanic(t, func() {
		core.AddTool(srv, &core.Tool{Name: "tree", Description: "Walks a tree."},
			func(ctx context.Context, req *core.CallToolRequest, in treeNode) (string, error) { return in.Name, nil })
	})
	if !strings.Contains(msg, `AddTool "tree"`) || !strings.Contains(msg, "recursive") || !strings.Contains(msg, "Children") {
		t.Errorf("panic message %q does not name the tool, the recursion and the field", msg)
	}
	msg = mustPanic(t, func() {
		core.AddTool(srv, &core.Tool{Name: "list", Description: "Returns a list."},
			func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (*linked, error) { return nil, nil })
	})
	if !strings.Contains(msg, "output schema") || !strings.Contains(msg, "recursive") || !strings.Contains(msg, "Next") {
		t.Errorf("panic message %q does not name the output, the recursion and the field", msg)
	}
	// The server still works.
	core.AddTool(srv, &core.Tool{Name: "ok", Description: "Fine."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) { return "fine", nil })
	if got := textOf(callReq(1, "ok", nil).do(t, srv).result(t)); got != "fine" {
		t.Errorf("after the refused registrations: %q", got)
	}
}

// TestSchemaTagDialect checks the one jsonschema tag dialect of tools and
// forms: the official Go SDK's bare description (commas included), the
// key=value form, and a clear registration error for an ambiguous tag
// (issue 11, defect 7).
func TestSchemaTagDialect(t *testing.T) {
	t.Parallel()
	type weatherArgs struct {
		City  string `json:"city" jsonschema:"the city, in English"`
		Units string `json:"units,omitempty" jsonschema:"description=metric\\, or imperial,enum=metric,enum=imperial"`
		Inner struct {
			Zip string `json:"zip" jsonschema:"postal code"`
		} `json:"inner"`
	}
	srv := core.NewServer(testImpl, nil)
	core.AddTool(srv, &core.Tool{Name: "weather", Description: "Weather."},
		func(ctx context.Context, req *core.CallToolRequest, in weatherArgs) (string, error) {
			return in.City, nil
		})
	res := mreq(1, "tools/list", nil).do(t, srv).result(t)
	schema := at(res, "tools", 0, "inputSchema")
	for path, want := range map[string]string{
		"city":  "the city, in English",
		"units": "metric, or imperial",
	} {
		if got := str(at(schema, "properties", path, "description")); got != want {
			t.Errorf("%s description = %q, want %q", path, got, want)
		}
	}
	if got := str(at(schema, "properties", "inner", "properties", "zip", "description")); got != "postal code" {
		t.Errorf("nested description = %q", got)
	}
	if got := at(schema, "properties", "units", "enum"); len(got.([]any)) != 2 {
		t.Errorf("units enum = %v", got)
	}
	type ambiguous struct {
		City string `json:"city" jsonschema:"the city,minimum=3"`
	}
	msg := mustPanic(t, func() {
		core.AddTool(srv, &core.Tool{Name: "amb", Description: "Ambiguous."},
			func(ctx context.Context, req *core.CallToolRequest, in ambiguous) (string, error) { return "", nil })
	})
	if !strings.Contains(msg, "ambiguous") || !strings.Contains(msg, "City") {
		t.Errorf("panic message %q does not explain the ambiguous tag", msg)
	}

	// Forms read the same dialect.
	type booking struct {
		Name string `json:"name" jsonschema:"who is it for, please"`
		Time string `json:"time" jsonschema:"title=Time,enum=18:00,enum=19:00,default=19:00"`
	}
	f, err := core.NewForm[booking]()
	if err != nil {
		t.Fatal(err)
	}
	v := decode(t, f.Schema())
	if got := str(at(v, "properties", "name", "description")); got != "who is it for, please" {
		t.Errorf("form description = %q", got)
	}
	if got := str(at(v, "properties", "time", "title")); got != "Time" {
		t.Errorf("form title = %q", got)
	}
	if got := str(at(v, "properties", "time", "default")); got != "19:00" {
		t.Errorf("form default = %q", got)
	}
	if _, err := core.NewForm[ambiguous](); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("ambiguous form tag: %v", err)
	}
}

// TestFormKeepsDeclarationOrder checks that a form lists its fields in
// declaration order, not alphabetically (issue 11, defect 7).
func TestFormKeepsDeclarationOrder(t *testing.T) {
	t.Parallel()
	type survey struct {
		Zeta  string `json:"zeta"`
		Alpha string `json:"alpha"`
		Mid   bool   `json:"mid,omitempty"`
		Beta  int    `json:"beta"`
	}
	f, err := core.NewForm[survey]()
	if err != nil {
		t.Fatal(err)
	}
	raw := f.Schema()
	last := -1
	for _, k := range []string{`"zeta":`, `"alpha":`, `"mid":`, `"beta":`} {
		i := bytes.Index(raw, []byte(k))
		if i <= last {
			t.Fatalf("property %s out of declaration order in %s", k, raw)
		}
		last = i
	}
	validateSpec(t, "2025-11-25", "ElicitRequestFormParams", []byte(`{"mode":"form","message":"m","requestedSchema":`+string(raw)+`}`))
}

// TestRawAnswersHidden checks that handlers see only verified answers: the
// request structs expose no raw inputResponses or requestState beside
// Request.Input, and an answer to a question the handler never asked does
// not reach it (issue 11, defect 9).
func TestRawAnswersHidden(t *testing.T) {
	t.Parallel()
	for _, typ := range []reflect.Type{
		reflect.TypeFor[core.CallToolParams](),
		reflect.TypeFor[core.CallToolRequest](),
		reflect.TypeFor[core.ReadResourceRequest](),
		reflect.TypeFor[core.GetPromptRequest](),
	} {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if f.IsExported() && (f.Type == reflect.TypeFor[map[string]json.RawMessage]() || strings.Contains(f.Name, "InputResponses") || f.Name == "RequestState") {
				t.Errorf("%v exposes the raw multi round-trip field %s", typ, f.Name)
			}
		}
	}

	srv := core.NewServer(testImpl, nil)
	type seen struct{ asked, unasked bool }
	got := make(chan seen, 2)
	core.AddTool(srv, &core.Tool{Name: "ask", Description: "Asks one question."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			if req.Input.Len() == 0 {
				return "", core.InputRequired(core.InputRequests{"name": core.ElicitForm("Name?", json.RawMessage(`{"type":"object","properties":{"n":{"type":"string"}}}`))}, "r1")
			}
			_, asked := req.Input.Raw("name")
			_, unasked := req.Input.Raw("other")
			got <- seen{asked, unasked}
			return "done", nil
		})
	caps := map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}
	first := callReq(1, "ask", nil).withCaps(caps).do(t, srv).result(t)
	state := str(at(first, "requestState"))
	if state == "" {
		t.Fatalf("no requestState in %v", first)
	}
	ans := map[string]any{"action": "accept", "content": map[string]any{"n": "x"}}
	res := callReq(2, "ask", nil).withCaps(caps).withParam("requestState", state).
		withParam("inputResponses", map[string]any{"name": ans, "other": ans}).do(t, srv).result(t)
	if textOf(res) != "done" {
		t.Fatalf("second round: %v", res)
	}
	if s := <-got; !s.asked || s.unasked {
		t.Errorf("handler saw asked=%v unasked=%v, want true false", s.asked, s.unasked)
	}
}
