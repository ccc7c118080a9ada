package secretsmanager_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/store/secretsmanager"
)

var confirmForm = json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)

// newConfirmServer returns a core server with one multi round-trip tool:
// "confirm" asks for a confirmation, with state, and completes when the
// retry carries the answer and the state.
func newConfirmServer(keys core.KeyProvider) *core.Server {
	s := core.NewServer(core.Implementation{Name: "keys-e2e", Version: "1.0.0"}, &core.ServerOptions{Keys: keys})
	core.AddTool(s, &core.Tool{Name: "confirm", Description: "Asks for a confirmation."},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (*core.CallToolResult, error) {
			if req.Input.State() == "awaiting-confirmation" {
				if _, ok := req.Input.Elicitation("confirm"); ok {
					return &core.CallToolResult{Content: []core.Content{&core.TextContent{Text: "confirmed"}}}, nil
				}
			}
			return nil, core.InputRequired(core.InputRequests{"confirm": core.ElicitForm("Please confirm", confirmForm)}, "awaiting-confirmation")
		})
	return s
}

type rpcResponse struct {
	Result *struct {
		ResultType   string `json:"resultType"`
		RequestState string `json:"requestState"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// callConfirm sends tools/call "confirm" (2026-07-28) with the given state
// and, when state is set, the answer.
func callConfirm(t *testing.T, srv http.Handler, state string) *rpcResponse {
	t.Helper()
	params := map[string]any{
		"name":      "confirm",
		"arguments": map[string]any{},
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "test", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}},
		},
	}
	if state != "" {
		params["requestState"] = state
		params["inputResponses"] = map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "confirm")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	raw := rec.Body.String()
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
		evs, err := mcptest.ReadEvents(strings.NewReader(raw), true)
		if err != nil {
			t.Fatalf("SSE body: %v\n%s", err, raw)
		}
		for _, ev := range evs {
			if strings.Contains(ev.Data, `"id"`) {
				raw = ev.Data
			}
		}
	}
	var resp rpcResponse
	if err := json.Unmarshal([]byte(raw), &resp); err != nil {
		t.Fatalf("status %d, body %q: %v", rec.Code, rec.Body.String(), err)
	}
	if resp.Result == nil && resp.Error == nil {
		t.Fatalf("neither result nor error: %s", raw)
	}
	return &resp
}

// seal runs round 1 and returns the sealed requestState.
func seal(t *testing.T, srv http.Handler) string {
	t.Helper()
	r := callConfirm(t, srv, "")
	if r.Result == nil || r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
		t.Fatalf("round 1: %+v", r)
	}
	return r.Result.RequestState
}

func wantComplete(t *testing.T, srv http.Handler, state, what string) {
	t.Helper()
	r := callConfirm(t, srv, state)
	if r.Error != nil || r.Result == nil || r.Result.ResultType != "complete" {
		t.Fatalf("%s: retry answered %+v %+v, want a complete result", what, r.Result, r.Error)
	}
}

func wantRejected(t *testing.T, srv http.Handler, state, what string) {
	t.Helper()
	r := callConfirm(t, srv, state)
	if r.Error == nil || r.Error.Code != -32602 || r.Error.Message != "Invalid or expired requestState" {
		t.Fatalf("%s: retry answered %+v %+v, want -32602 Invalid or expired requestState", what, r.Result, r.Error)
	}
}

// keyIDOf returns the key id in a sealed state ("v1.<key id>.<payload>.<mac>").
func keyIDOf(t *testing.T, state string) string {
	t.Helper()
	parts := strings.Split(state, ".")
	if len(parts) != 4 {
		t.Fatalf("sealed state %q has %d parts", state, len(parts))
	}
	return parts[1]
}

// TestRotationWithCore seals state through a core.Server using Keys, rotates
// the secret, and checks which states verify afterwards.
func TestRotationWithCore(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sm := newSMServer(t)
		v1, v2, v3 := newVersionID(), newVersionID(), newVersionID()
		sm.put(secretName, v1, secretsmanager.NewSecretString())
		keys := newKeys(t, sm, nil)
		srv := newConfirmServer(keys)
		// A second instance of the fleet, with its own cache of the same secret.
		other := newConfirmServer(newKeys(t, sm, nil))

		s1 := seal(t, srv)
		if keyIDOf(t, s1) != v1 {
			t.Fatalf("state sealed with key %q, want the AWSCURRENT version %s", keyIDOf(t, s1), v1)
		}
		wantComplete(t, srv, s1, "before any rotation")
		wantComplete(t, other, s1, "on another instance")
		wantRejected(t, srv, s1+"-TAMPERED", "tampered state")

		sm.put(secretName, v2, secretsmanager.NewSecretString()) // rotation: v1 becomes AWSPREVIOUS
		time.Sleep(time.Minute)
		s2 := seal(t, srv)
		if keyIDOf(t, s2) != v2 {
			t.Fatalf("after the rotation, state sealed with key %q, want %s", keyIDOf(t, s2), v2)
		}
		wantComplete(t, srv, s1, "state sealed before the rotation")
		wantComplete(t, other, s2, "state sealed with the new key, on another instance")

		sm.put(secretName, v3, secretsmanager.NewSecretString()) // v1 leaves the secret's stages
		time.Sleep(time.Minute)
		wantRejected(t, srv, s1, "state sealed with a retired key")
		wantRejected(t, other, s1, "state sealed with a retired key, on another instance")
		wantComplete(t, srv, s2, "state sealed with the now AWSPREVIOUS key")
	})
}
