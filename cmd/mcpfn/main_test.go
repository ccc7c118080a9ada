package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/core"
)

type none struct{}

func server(t *testing.T) (string, *atomic.Int32) {
	srv := core.NewServer(core.Implementation{Name: "cli-test", Version: "1"}, nil)
	core.AddTool(srv, &core.Tool{Name: "echo"}, func(ctx context.Context, req *core.CallToolRequest, in struct {
		S string `json:"s"`
	}) (string, error) {
		return "echo:" + in.S, nil
	})
	core.AddTool(srv, &core.Tool{Name: "fails"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
		return "", core.ToolErrorf("no")
	})
	core.AddTool(srv, &core.Tool{Name: "ask"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
		if r, ok := req.Input.Elicitation("q"); ok {
			b, _ := json.Marshal(r.Content)
			return r.Action + string(b), nil
		}
		return "", core.InputRequired(core.InputRequests{"q": core.ElicitForm("name?",
			json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"n":{"type":"integer","default":7}}}`))}, "")
	})
	var posts atomic.Int32
	ts := httptest.NewServer(nethttp.NewHandler(srv, &nethttp.Options{Middleware: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				posts.Add(1)
			}
			h.ServeHTTP(w, r)
		})
	}}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp", &posts
}

func mcpfn(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	if out.Len() > 0 {
		// Exactly one JSON document on stdout.
		dec := json.NewDecoder(bytes.NewReader(out.Bytes()))
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("stdout is not JSON: %v: %s", err, out.String())
		}
		if dec.More() {
			t.Fatalf("stdout holds more than one document: %s", out.String())
		}
	}
	return code, out.String(), errb.String()
}

func TestCLI(t *testing.T) {
	url, posts := server(t)
	for _, mode := range []string{"auto", "modern", "legacy"} {
		t.Run(mode, func(t *testing.T) {
			code, out, errs := mcpfn(t, "", "discover", url, "--mode", mode)
			if code != 0 {
				t.Fatalf("discover: %d %s", code, errs)
			}
			want := `"supportedVersions"`
			if mode == "legacy" {
				want = `"protocolVersion":"2025-11-25"`
			}
			if !strings.Contains(out, want) {
				t.Fatalf("discover output %s", out)
			}
			// Flags before the command word too.
			code, out, _ = mcpfn(t, "", "--mode="+mode, "tools", url)
			if code != 0 || !strings.Contains(out, `"name":"echo"`) || !strings.HasPrefix(out, `{"tools":[`) {
				t.Fatalf("tools: %d %s", code, out)
			}
			code, out, _ = mcpfn(t, "", "--mode", mode, "call", url, "echo", `{"s":"hi"}`)
			if code != 0 || !strings.Contains(out, `echo:hi`) {
				t.Fatalf("call: %d %s", code, out)
			}
			code, out, _ = mcpfn(t, "", "call", url, "fails", "--mode", mode)
			if code != 1 || !strings.Contains(out, `"isError":true`) {
				t.Fatalf("isError call: %d %s", code, out)
			}
			// Non-interactive answers; defaults of the form are filled in.
			code, out, _ = mcpfn(t, "", "call", url, "ask", "--mode", mode, "--answer", `{"name":"Ada"}`)
			if code != 0 || !strings.Contains(out, `accept{\"n\":7,\"name\":\"Ada\"}`) {
				t.Fatalf("answered call: %d %s", code, out)
			}
			// On the terminal, the fields in the schema's order: name, n.
			code, out, errs = mcpfn(t, "y\nBob\n\n", "call", url, "ask", "--mode", mode)
			if code != 0 || !strings.Contains(out, `\"name\":\"Bob\"`) || !strings.Contains(errs, "name?") {
				t.Fatalf("terminal call: %d %s %s", code, out, errs)
			}
			code, out, _ = mcpfn(t, "", "call", url, "ask", "--mode", mode, "--answer", "decline")
			if code != 0 || !strings.Contains(out, `decline`) {
				t.Fatalf("declined call: %d %s", code, out)
			}
		})
	}
	t.Run("usage", func(t *testing.T) {
		before := posts.Load()
		for _, args := range [][]string{
			{"call", url, "echo", `[1,2]`},
			{"call", url, "echo", `"s"`},
			{"call", url},
			{"frobnicate", url},
			{},
			{"tools", url, "--mode", "sideways"},
			{"tools", url, "--bogus"},
		} {
			if code, out, _ := mcpfn(t, "", args...); code != 2 || out != "" {
				t.Errorf("%q: exit %d, stdout %q", args, code, out)
			}
		}
		if posts.Load() != before {
			t.Fatal("a usage error sent a request")
		}
	})
	t.Run("failure", func(t *testing.T) {
		if code, out, _ := mcpfn(t, "", "tools", "http://127.0.0.1:1/mcp"); code != 3 || out != "" {
			t.Fatalf("exit %d, stdout %q", code, out)
		}
		if code, _, errs := mcpfn(t, "", "call", url, "nope", "--mode", "modern"); code != 3 || !strings.Contains(errs, "-32602") {
			t.Fatalf("unknown tool: exit %d %s", code, errs)
		}
	})
}
