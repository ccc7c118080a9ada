package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/core"
)

// TestFormFieldOrder: the fields of an elicitation form are asked in the
// order the server's requestedSchema lists its properties, not sorted, and
// each answer goes to its field.
func TestFormFieldOrder(t *testing.T) {
	t.Parallel()
	srv := core.NewServer(core.Implementation{Name: "form-order", Version: "1"}, nil)
	core.AddTool(srv, &core.Tool{Name: "form"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
		if r, ok := req.Input.Elicitation("f"); ok {
			b, _ := json.Marshal(r.Content)
			return string(b), nil
		}
		return "", core.InputRequired(core.InputRequests{"f": core.ElicitForm("your details",
			json.RawMessage(`{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"string"},"mid":{"type":"integer"}},"required":["alpha"]}`))}, "")
	})
	ts := httptest.NewServer(nethttp.NewHandler(srv, nil))
	t.Cleanup(ts.Close)
	for _, mode := range []string{"modern", "legacy"} {
		code, out, errs := mcpfn(t, "y\nZ\nA\n3\n", "call", ts.URL+"/mcp", "form", "--mode", mode)
		if code != 0 || !strings.Contains(out, `{\"alpha\":\"A\",\"mid\":3,\"zeta\":\"Z\"}`) {
			t.Fatalf("%s: exit %d %s\n%s", mode, code, out, errs)
		}
		z, a, m := strings.Index(errs, "  zeta ("), strings.Index(errs, "  alpha ("), strings.Index(errs, "  mid (")
		if z < 0 || !(z < a && a < m) {
			t.Errorf("%s: the fields were not asked in the schema's order zeta, alpha, mid:\n%s", mode, errs)
		}
	}
	// The tools table lists optional arguments in the same order.
	if got := argumentList(json.RawMessage(`{"properties":{"b":{},"c":{},"a":{}},"required":["c"]}`)); got != "c [b] [a]" {
		t.Errorf("argumentList = %q, want %q", got, "c [b] [a]")
	}
	// A schema whose order cannot be read (duplicate names) is asked sorted.
	if got := orderedNames([]byte(`{"properties":{"b":1,"a":2,"b":3}}`), map[string]int{"a": 0, "b": 0}); strings.Join(got, ",") != "a,b" {
		t.Errorf("orderedNames of a schema with a duplicate = %q", got)
	}
}

// TestConnectionRefusedHint: a refused connection names the address and
// URL tried and asks whether the server runs; for the quick start's
// address it says how to start one there.
func TestConnectionRefusedHint(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	url := "http://" + addr + "/mcp"
	code, out, errs := mcpfn(t, "", "tools", url)
	if code != exitFailure || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	if !strings.Contains(errs, "connection refused") || !strings.Contains(errs, "mcpfn: hint: nothing is listening at "+addr+" (tried "+url+"): is the server running") {
		t.Errorf("stderr:\n%s", errs)
	}
	if strings.Contains(errs, "examples/calculator") {
		t.Errorf("the calculator hint for another address:\n%s", errs)
	}
	for _, u := range []string{"http://127.0.0.1:8080/mcp", "http://localhost:8080/mcp", "http://[::1]:8080/mcp"} {
		if h := refusedHint(u); !strings.Contains(h, "`go run ./examples/calculator`") || !strings.Contains(h, "`mcpfn dev`") || !strings.Contains(h, "tried "+u) {
			t.Errorf("refusedHint(%s) = %q", u, h)
		}
	}
	if h := refusedHint("https://example.com/mcp"); !strings.Contains(h, "example.com:443") || strings.Contains(h, "calculator") {
		t.Errorf("refusedHint(https://example.com/mcp) = %q", h)
	}
}

// TestJSONArgumentErrors: arguments that are not valid JSON get the syntax
// error and where it is; valid JSON of another kind is "must be a JSON
// object". Nothing is sent either way.
func TestJSONArgumentErrors(t *testing.T) {
	t.Parallel()
	url, posts := server(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"call", url, "echo", `{"s": hi}`}, []string{
			"mcpfn: the arguments: invalid JSON at byte 7: invalid character 'h' looking for beginning of value\n",
			"\n  {\"s\": hi}\n        ^\n"}},
		{[]string{"call", url, "echo", `{"s":"hi"`}, []string{
			"mcpfn: the arguments: invalid JSON: unexpected end of JSON input\n",
			"\n  {\"s\":\"hi\"\n           ^\n"}},
		{[]string{"call", url, "echo", `[1,2]`}, []string{`mcpfn: the arguments must be a JSON object, such as {"name":"value"}, not an array`}},
		{[]string{"call", url, "echo", `null`}, []string{`mcpfn: the arguments must be a JSON object, such as {"name":"value"}, not null`}},
		{[]string{"call", url, "echo", `"s"`}, []string{"not a string"}},
		{[]string{"get", url, "p", `{"topic":zip}`}, []string{"mcpfn: the prompt arguments: invalid JSON at byte 10: invalid character 'z'"}},
		{[]string{"call", url, "ask", "--answer", `{"name":}`}, []string{"mcpfn: --answer: invalid JSON at byte 9: invalid character '}'"}},
	} {
		code, out, errs := mcpfn(t, "", tc.args...)
		if code != exitUsage || out != "" {
			t.Errorf("%q: exit %d, stdout %q", tc.args, code, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%q: stderr lacks %q:\n%s", tc.args, w, errs)
			}
		}
	}
	// A long argument is cut around the error, the caret still under it.
	long := `{"a":"` + strings.Repeat("x", 100) + `",` + `"b":tru}`
	err := jsonObjectError("the arguments", long)
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "  …") || []rune(lines[1])[strings.Index(lines[2], "^")] != '}' {
		t.Errorf("long argument:\n%v", err)
	}
	if posts.Load() != 0 {
		t.Error("an invalid argument sent a request")
	}
}

// TestAbsentCapability: listing what the server does not offer at all
// (tools/list, resources/list or prompts/list answered -32601) is an empty
// list and exit 0, with a note on stderr, in both eras and both output
// modes.
func TestAbsentCapability(t *testing.T) {
	t.Parallel()
	srv := core.NewServer(core.Implementation{Name: "prompts-only", Version: "1"}, nil)
	srv.AddPrompt(&core.Prompt{Name: "p"}, func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
		return &core.GetPromptResult{}, nil
	})
	promptsOnly := httptest.NewServer(nethttp.NewHandler(srv, nil))
	t.Cleanup(promptsOnly.Close)
	toolsOnly, _ := server(t)
	for _, mode := range []string{"modern", "legacy"} {
		for _, tc := range []struct {
			url, cmd, doc, text string
		}{
			{promptsOnly.URL + "/mcp", "tools", `{"tools":[]}`, "no tools\n"},
			{toolsOnly, "resources", `{"resources":[],"resourceTemplates":[]}`, "no resources\n"},
			{toolsOnly, "prompts", `{"prompts":[]}`, "no prompts\n"},
		} {
			note := "mcpfn: the server offers no " + tc.cmd + " (it does not serve " + tc.cmd + "/list)\n"
			code, out, errs := mcpfn(t, "", tc.cmd, tc.url, "--mode", mode)
			if code != exitOK || out != tc.doc+"\n" || errs != note {
				t.Errorf("%s %s: exit %d\nstdout %q\nstderr %q", mode, tc.cmd, code, out, errs)
			}
			code, out, errs = human(t, tc.cmd, tc.url, "--mode", mode)
			if code != exitOK || out != tc.text || errs != note {
				t.Errorf("%s %s for people: exit %d\nstdout %q\nstderr %q", mode, tc.cmd, code, out, errs)
			}
		}
	}
	// A server that offers them lists them with no note.
	if code, out, errs := mcpfn(t, "", "prompts", promptsOnly.URL+"/mcp"); code != 0 || !strings.Contains(out, `"name":"p"`) || errs != "" {
		t.Errorf("prompts: exit %d %s %s", code, out, errs)
	}
}
