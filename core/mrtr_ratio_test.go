package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

// BenchmarkMRTRRatio runs, in one process, a one-round tools/call and the
// two rounds of a multi round-trip tools/call of the same shape (a form
// elicitation, then the retry with the answer and the sealed state), so that
// their ratio can be read off one run: two-round ÷ one-round, target ≤ 2.2.
func BenchmarkMRTRRatio(b *testing.B) {
	srv := core.NewServer(core.Implementation{Name: "ratio", Version: "1"}, nil)
	type nameForm struct {
		Name string `json:"name"`
	}
	form := core.MustForm[nameForm]()
	type args struct {
		Greeting string `json:"greeting"`
	}
	core.AddTool(srv, &core.Tool{Name: "hello", Description: "Greets."},
		func(ctx context.Context, req *core.CallToolRequest, in args) (string, error) {
			return in.Greeting + ", World!", nil
		})
	core.AddTool(srv, &core.Tool{Name: "ask", Description: "Asks for a name, then greets."},
		func(ctx context.Context, req *core.CallToolRequest, in args) (string, error) {
			if n, ok := form.Accepted(req.Input, "name"); ok {
				return in.Greeting + ", " + n.Name + "!", nil
			}
			return "", core.InputRequired(core.InputRequests{"name": form.Request("What is your name?")}, "asked")
		})
	meta := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}}}
	body := func(id int, name string, extra map[string]any) []byte {
		p := map[string]any{"name": name, "arguments": map[string]any{"greeting": "Hello"}, "_meta": meta}
		for k, v := range extra {
			p[k] = v
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": p})
		return b
	}
	newReq := func(name string, b []byte) (*http.Request, *bytes.Reader) {
		rd := bytes.NewReader(b)
		r := httptest.NewRequest(http.MethodPost, "/mcp", rd)
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("MCP-Protocol-Version", "2026-07-28")
		r.Header.Set("Mcp-Method", "tools/call")
		r.Header.Set("Mcp-Name", name)
		return r, rd
	}
	serve := func(r *http.Request, rd *bytes.Reader, raw []byte) *httptest.ResponseRecorder {
		rd.Reset(raw)
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		return w
	}
	oneRaw := body(1, "hello", nil)
	one, oneRd := newReq("hello", oneRaw)
	firstRaw := body(2, "ask", nil)
	first, firstRd := newReq("ask", firstRaw)
	state := firstRoundState(b, serve(first, firstRd, firstRaw).Body.Bytes())
	secondRaw := body(3, "ask", map[string]any{"requestState": state,
		"inputResponses": map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}})
	second, secondRd := newReq("ask", secondRaw)
	if w := serve(second, secondRd, secondRaw); !bytes.Contains(w.Body.Bytes(), []byte("Hello, Ada!")) {
		b.Fatalf("second round: %s", w.Body.Bytes())
	}
	for _, bc := range []struct {
		name string
		run  func()
	}{
		{"one-round", func() { serve(one, oneRd, oneRaw) }},
		{"round-1", func() { serve(first, firstRd, firstRaw) }},
		{"round-2", func() { serve(second, secondRd, secondRaw) }},
		{"two-round", func() {
			serve(first, firstRd, firstRaw)
			serve(second, secondRd, secondRaw)
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				bc.run()
			}
		})
	}
}
