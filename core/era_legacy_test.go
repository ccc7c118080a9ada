package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/core"
)

const legacyVersion = core.ProtocolVersion20251125

// initialize runs the legacy handshake and returns the session id.
func initialize(t testing.TB, h http.Handler, version string, caps map[string]any, ctx context.Context) string {
	t.Helper()
	if caps == nil {
		caps = map[string]any{}
	}
	r := lreq(0, "initialize", map[string]any{"protocolVersion": version, "capabilities": caps,
		"clientInfo": map[string]any{"name": "legacy-client", "version": "1.0"}}, "", "")
	if ctx != nil {
		r.withContext(ctx)
	}
	res := r.do(t, h)
	out := res.result(t)
	id := res.Header.Get(core.HeaderSessionID)
	if id == "" {
		t.Fatalf("no session id: %s", res.Body)
	}
	n := lreq(nil, "notifications/initialized", nil, str(out["protocolVersion"]), id)
	if ctx != nil {
		n.withContext(ctx)
	}
	if nr := n.do(t, h); nr.Status != http.StatusAccepted || len(nr.Body) != 0 {
		t.Fatalf("notifications/initialized: HTTP %d %q", nr.Status, nr.Body)
	}
	return id
}

// TestLegacyInitialize checks version negotiation and the session id
// (2025-11-25 basic/lifecycle, basic/transports).
func TestLegacyInitialize(t *testing.T) {
	t.Parallel()
	srv := newFixture(t, nil)
	ids := map[string]bool{}
	for requested, want := range map[string]string{
		core.ProtocolVersion20251125: core.ProtocolVersion20251125,
		core.ProtocolVersion20250618: core.ProtocolVersion20250618,
		core.ProtocolVersion20250326: core.ProtocolVersion20250326,
		"2024-11-05":                 core.ProtocolVersion20251125,
		modernVersion:                core.ProtocolVersion20251125,
		"banana":                     core.ProtocolVersion20251125,
	} {
		r := lreq(1, "initialize", map[string]any{"protocolVersion": requested, "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "c", "version": "1"}}, "", "").do(t, srv)
		res := r.result(t)
		if got := str(res["protocolVersion"]); got != want {
			t.Errorf("initialize %s: negotiated %s, want %s", requested, got, want)
		}
		validateSpec(t, legacyVersion, "InitializeResult", r.resultRaw(t))
		assertNoModernLeak(t, r)
		if str(at(res, "serverInfo", "name")) != testImpl.Name || at(res, "capabilities", "tools") == nil {
			t.Errorf("initialize result: %s", r.Body)
		}
		id := r.Header.Get(core.HeaderSessionID)
		if len(id) < 16 {
			t.Errorf("session id %q is too short to be unguessable", id)
		}
		for i := 0; i < len(id); i++ {
			if id[i] < 0x21 || id[i] > 0x7e {
				t.Errorf("session id %q has a byte outside visible ASCII", id)
			}
		}
		if ids[id] {
			t.Errorf("session id %q issued twice", id)
		}
		ids[id] = true
	}
	// Malformed initialize.
	lreq(1, "initialize", map[string]any{"capabilities": map[string]any{}}, "", "").do(t, srv).wantError(t, 200, core.CodeInvalidParams)
	lreq(1, "initialize", nil, "", "").do(t, srv).wantError(t, 200, core.CodeInvalidParams)
	// A modern-only server names its versions in the error it gives
	// initialize (2025-11-25 basic/lifecycle).
	modern := newFixture(t, &core.ServerOptions{Mode: core.ModeModern})
	r := lreq(1, "initialize", map[string]any{"protocolVersion": legacyVersion, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "c", "version": "1"}}, "", "").do(t, modern)
	if r.Status != http.StatusBadRequest {
		t.Errorf("modern-only initialize: HTTP %d, want 400", r.Status)
	}
	e := r.rpcError(t)
	if !strings.Contains(string(toJSON(t, e)), modernVersion) {
		t.Errorf("modern-only server's answer to initialize does not name %s: %s", modernVersion, r.Body)
	}
	if r.Header.Get(core.HeaderSessionID) != "" {
		t.Errorf("modern-only server minted a session")
	}
}

// TestLegacySessions checks the session rules (2025-11-25 basic/transports).
func TestLegacySessions(t *testing.T) {
	t.Parallel()
	srv := newFixture(t, nil)
	sid := initialize(t, srv, legacyVersion, nil, nil)
	call := func(id any, method string, params map[string]any, version, session string) *resp {
		return lreq(id, method, params, version, session).do(t, srv)
	}
	t.Run("empty results are exactly {}", func(t *testing.T) {
		for _, c := range []struct {
			method string
			params map[string]any
		}{
			{"ping", nil},
			{"logging/setLevel", map[string]any{"level": "info"}},
			{"resources/subscribe", map[string]any{"uri": "test://static"}},
			{"resources/unsubscribe", map[string]any{"uri": "test://static"}},
		} {
			r := call(1, c.method, c.params, legacyVersion, sid)
			if got := string(r.resultRaw(t)); got != "{}" {
				t.Errorf("%s: result %s, want exactly {}", c.method, got)
			}
			if r.Header.Get(core.HeaderSessionID) != sid {
				t.Errorf("%s: Mcp-Session-Id not echoed", c.method)
			}
		}
		// ping and setLevel without a session too.
		if got := string(call(1, "ping", nil, legacyVersion, "").resultRaw(t)); got != "{}" {
			t.Errorf("sessionless ping: %s", got)
		}
		call(1, "logging/setLevel", map[string]any{"level": "loud"}, legacyVersion, sid).wantError(t, 200, core.CodeInvalidParams)
	})
	t.Run("version header must match the session", func(t *testing.T) {
		call(1, "tools/list", nil, core.ProtocolVersion20250618, sid).wantError(t, http.StatusBadRequest, core.CodeInvalidRequest)
		// A modern version header with a session and without modern _meta.
		call(1, "tools/list", nil, modernVersion, sid).wantError(t, http.StatusBadRequest, core.CodeInvalidRequest)
		// Unknown version without a session.
		r := call(1, "tools/list", nil, "1999-01-01", "")
		if r.Status != http.StatusBadRequest {
			t.Errorf("unsupported legacy header: HTTP %d", r.Status)
		}
		call(1, "tools/list", nil, legacyVersion, sid).result(t)
		call(1, "tools/list", nil, "", sid).result(t)
	})
	t.Run("unknown session", func(t *testing.T) {
		r := call(1, "tools/list", nil, legacyVersion, "no-such-session")
		if r.Status != http.StatusNotFound {
			t.Errorf("unknown session: HTTP %d, want 404", r.Status)
		}
	})
	t.Run("delete", func(t *testing.T) {
		id := initialize(t, srv, legacyVersion, nil, nil)
		del := func() int {
			req := httptest.NewRequest(http.MethodDelete, "/mcp", nil)
			req.Header.Set(core.HeaderSessionID, id)
			req.Header.Set(core.HeaderProtocolVersion, legacyVersion)
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			return rec.Code
		}
		if code := del(); code < 200 || code > 299 {
			t.Fatalf("DELETE: HTTP %d", code)
		}
		if r := call(1, "ping", nil, legacyVersion, id); r.Status != http.StatusNotFound {
			t.Errorf("request after DELETE: HTTP %d, want 404", r.Status)
		}
		if code := del(); code != http.StatusNotFound {
			t.Errorf("second DELETE: HTTP %d, want 404", code)
		}
		call(1, "ping", nil, legacyVersion, sid).result(t) // others unaffected
	})
	t.Run("bound to the principal", func(t *testing.T) {
		alice := core.NewContextWithPrincipal(context.Background(), &core.Principal{Issuer: "i", ClientID: "c", Subject: "alice"})
		bob := core.NewContextWithPrincipal(context.Background(), &core.Principal{Issuer: "i", ClientID: "c", Subject: "bob"})
		id := initialize(t, srv, legacyVersion, nil, alice)
		if r := lreq(1, "tools/list", nil, legacyVersion, id).withContext(alice).do(t, srv); r.Status != 200 {
			t.Fatalf("owner: HTTP %d", r.Status)
		}
		for name, ctx := range map[string]context.Context{"other principal": bob, "anonymous": context.Background()} {
			if r := lreq(1, "tools/list", nil, legacyVersion, id).withContext(ctx).do(t, srv); r.Status != http.StatusNotFound {
				t.Errorf("%s: HTTP %d, want 404", name, r.Status)
			}
		}
		// An anonymous session is not usable by an authenticated caller.
		if r := lreq(1, "tools/list", nil, legacyVersion, sid).withContext(bob).do(t, srv); r.Status != http.StatusNotFound {
			t.Errorf("anonymous session used by bob: HTTP %d, want 404", r.Status)
		}
	})
	t.Run("stateful mode requires the header", func(t *testing.T) {
		s := newFixture(t, &core.ServerOptions{Sessions: core.SessionsStateful})
		lreq(1, "tools/list", nil, legacyVersion, "").do(t, s).wantError(t, http.StatusBadRequest, core.CodeInvalidRequest)
		id := initialize(t, s, legacyVersion, nil, nil)
		lreq(1, "tools/list", nil, legacyVersion, id).do(t, s).result(t)
	})
	t.Run("stateless mode issues none", func(t *testing.T) {
		s := newFixture(t, &core.ServerOptions{Sessions: core.SessionsStateless})
		r := lreq(1, "initialize", map[string]any{"protocolVersion": legacyVersion, "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "c", "version": "1"}}, "", "").do(t, s)
		r.result(t)
		if r.Header.Get(core.HeaderSessionID) != "" {
			t.Errorf("session issued in stateless mode")
		}
		lreq(1, "tools/list", nil, legacyVersion, "").do(t, s).result(t)
	})
	t.Run("modern _meta ignores the session", func(t *testing.T) {
		r := mreq(1, "tools/list", nil).withHeader(core.HeaderSessionID, "no-such-session").do(t, srv)
		r.result(t)
		if r.Header.Get(core.HeaderSessionID) != "" {
			t.Errorf("modern response carries Mcp-Session-Id")
		}
	})
}

// TestLegacyBatches checks 2025-03-26 batches (2025-03-26 basic/index).
func TestLegacyBatches(t *testing.T) {
	t.Parallel()
	srv := newFixture(t, nil)
	sid := initialize(t, srv, core.ProtocolVersion20250326, nil, nil)
	batch := func(body string, version, session string) *resp {
		hdr := map[string]string{}
		if version != "" {
			hdr[core.HeaderProtocolVersion] = version
		}
		if session != "" {
			hdr[core.HeaderSessionID] = session
		}
		return rawReq(body, hdr).do(t, srv)
	}
	t.Run("mixed", func(t *testing.T) {
		for _, session := range []string{sid, ""} {
			r := batch(`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}},
				{"jsonrpc":"2.0","method":"notifications/initialized"},
				{"jsonrpc":"2.0","id":"two","method":"ping"},
				{"jsonrpc":"2.0","id":3,"method":"nope/nope"},
				{"jsonrpc":"2.0","id":null,"method":"ping"},
				{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}]`, "", session)
			if r.Status != 200 {
				t.Fatalf("HTTP %d: %s", r.Status, r.Body)
			}
			var out []map[string]json.RawMessage
			if err := json.Unmarshal(r.Body, &out); err != nil {
				t.Fatalf("not a JSON array: %s", r.Body)
			}
			byID := map[string]map[string]json.RawMessage{}
			noID := 0
			for _, m := range out {
				if id, ok := m["id"]; ok {
					byID[string(id)] = m
				} else {
					noID++
				}
			}
			if len(out) != 5 || noID != 1 {
				t.Fatalf("%d responses (%d without id), want 5 (1): %s", len(out), noID, r.Body)
			}
			if res := decode(t, byID["1"]["result"]); textOf(res.(map[string]any)) != "5" {
				t.Errorf("tools/call in batch: %s", byID["1"]["result"])
			}
			if string(byID[`"two"`]["result"]) != "{}" {
				t.Errorf("ping in batch: %s", byID[`"two"`]["result"])
			}
			if code := num(t, at(decode(t, byID["3"]["error"]), "code")); code != core.CodeMethodNotFound {
				t.Errorf("unknown method in batch: %d", code)
			}
			if byID["4"]["error"] == nil {
				t.Errorf("initialize in a batch got no error: %s", byID["4"]["result"])
			}
			assertNoModernLeak(t, &resp{Msgs: func() []json.RawMessage {
				var ms []json.RawMessage
				for _, m := range out {
					ms = append(ms, toJSON(t, m))
				}
				return ms
			}()})
		}
	})
	t.Run("only notifications", func(t *testing.T) {
		r := batch(`[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}]`, "", sid)
		if r.Status != http.StatusAccepted || len(r.Body) != 0 {
			t.Errorf("HTTP %d %q, want 202 and no body", r.Status, r.Body)
		}
	})
	t.Run("only responses", func(t *testing.T) {
		r := batch(`[{"jsonrpc":"2.0","id":"x","result":{}}]`, "", sid)
		if r.Status != http.StatusAccepted {
			t.Errorf("HTTP %d, want 202", r.Status)
		}
	})
	t.Run("not in 2025-11-25", func(t *testing.T) {
		id := initialize(t, srv, legacyVersion, nil, nil)
		batch(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, legacyVersion, id).wantError(t, http.StatusBadRequest, core.CodeInvalidRequest)
		batch(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, core.ProtocolVersion20250618, "").wantError(t, http.StatusBadRequest, core.CodeInvalidRequest)
	})
	t.Run("empty", func(t *testing.T) {
		batch(`[]`, "", sid).wantError(t, http.StatusBadRequest, core.CodeInvalidRequest)
	})
}

// TestLegacyResults checks that legacy results carry nothing of 2026-07-28,
// and that structured output reaches 2025-06-18 and 2025-11-25 clients for
// object roots only (outputSchema listed, structuredContent beside the text),
// and never 2025-03-26 clients, which have no structured output.
func TestLegacyResults(t *testing.T) {
	t.Parallel()
	srv := newFixture(t, &core.ServerOptions{CacheHints: map[string]core.CacheHint{"tools/list": {TTL: time.Hour, Scope: core.CacheScopePublic}}})
	core.AddTool(srv, &core.Tool{Name: "point"}, func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (point, error) {
		return point{1, 2}, nil
	})
	core.AddTool(srv, &core.Tool{Name: "raw_object"}, func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (*core.CallToolResult, error) {
		return &core.CallToolResult{Content: []core.Content{&core.TextContent{Text: "{}"}}, StructuredContent: map[string]any{"k": 1}}, nil
	})
	core.AddTool(srv, &core.Tool{Name: "raw_array", OutputSchema: json.RawMessage(`{"type":"array"}`)},
		func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (*core.CallToolResult, error) {
			return &core.CallToolResult{Content: []core.Content{&core.TextContent{Text: "[1]"}}, StructuredContent: []int{1}}, nil
		})
	core.AddTool(srv, &core.Tool{Name: "list"}, func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) ([]int, error) {
		return []int{1, 2}, nil
	})
	for _, version := range []string{core.ProtocolVersion20251125, core.ProtocolVersion20250618, core.ProtocolVersion20250326} {
		structured := version != core.ProtocolVersion20250326
		sid := initialize(t, srv, version, nil, nil)
		lr := lreq(1, "tools/list", nil, version, sid).do(t, srv)
		assertNoModernLeak(t, lr)
		validateSpec(t, legacyVersion, "ListToolsResult", lr.resultRaw(t))
		for _, tool := range at(lr.result(t), "tools").([]any) {
			name := str(at(tool, "name"))
			wantSchema := structured && name == "point"
			if got := has(tool, "outputSchema"); got != wantSchema {
				t.Errorf("%s tools/list: %s lists an outputSchema: %v, want %v", version, name, got, wantSchema)
			}
			if wantSchema && str(at(tool, "outputSchema", "type")) != "object" {
				t.Errorf("%s tools/list: %s outputSchema %v has no object root", version, name, at(tool, "outputSchema"))
			}
		}
		for tool, want := range map[string]string{"point": `{"x":1,"y":2}`, "add": "", "raw_object": `{"k":1}`, "raw_array": "", "list": ""} {
			args := map[string]any{}
			if tool == "add" {
				args = map[string]any{"a": 1, "b": 2}
			}
			r := lreq(1, "tools/call", map[string]any{"name": tool, "arguments": args}, version, sid).do(t, srv)
			assertNoModernLeak(t, r)
			validateSpec(t, legacyVersion, "CallToolResult", r.resultRaw(t))
			res := r.result(t)
			sc, present := res["structuredContent"]
			switch {
			case (want == "" || !structured) && present:
				t.Errorf("%s %s: legacy result carries structuredContent %v", version, tool, sc)
			case want != "" && structured && !present:
				t.Errorf("%s %s: no structuredContent, want %s", version, tool, want)
			case want != "" && structured && !jsonEq(t, toJSON(t, sc), []byte(want)):
				t.Errorf("%s %s: structuredContent = %v, want %s", version, tool, sc, want)
			}
			if tool != "raw_object" && want != "" && !jsonEq(t, []byte(textOf(res)), []byte(want)) {
				t.Errorf("%s %s: text form = %q, want %s beside the structured content", version, tool, textOf(res), want)
			}
		}
	}
	sid := initialize(t, srv, legacyVersion, nil, nil)
	for _, session := range []string{sid, ""} {
		if got := textOf(lreq(1, "tools/call", map[string]any{"name": "point"}, legacyVersion, session).do(t, srv).result(t)); !jsonEq(t, []byte(got), []byte(`{"x":1,"y":2}`)) {
			t.Errorf("typed legacy text = %q", got)
		}
		for _, req := range []*testReq{
			lreq(1, "resources/read", map[string]any{"uri": "test://static"}, legacyVersion, session),
			lreq(1, "resources/list", nil, legacyVersion, session),
			lreq(1, "prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"who": "x"}}, legacyVersion, session),
			lreq(1, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "greet"}, "argument": map[string]any{"name": "who", "value": "a"}}, legacyVersion, session),
		} {
			r := req.do(t, srv)
			r.result(t)
			assertNoModernLeak(t, r)
		}
		// Legacy requests without params work.
		v := legacyVersion
		if session == "" {
			v = core.ProtocolVersion20250618
		}
		lreq(1, "prompts/list", nil, v, session).do(t, srv).result(t)
	}
	// Unknown tool is -32602 in legacy too; unknown method -32601.
	lreq(1, "tools/call", map[string]any{"name": "nope"}, legacyVersion, sid).do(t, srv).wantError(t, 200, core.CodeInvalidParams)
	lreq(1, "subscriptions/listen", map[string]any{}, legacyVersion, sid).do(t, srv).wantError(t, 200, core.CodeMethodNotFound)
}

// TestLegacyLogging checks logging/setLevel: messages at or above the level
// on the call's stream.
func TestLegacyLogging(t *testing.T) {
	t.Parallel()
	srv := newNotifyServer(t)
	sid := initialize(t, srv, legacyVersion, nil, nil)
	r := lreq(1, "tools/call", map[string]any{"name": "work"}, legacyVersion, sid).do(t, srv)
	if len(r.notes(t)) != 0 {
		t.Errorf("notifications before setLevel: %s", r.Body)
	}
	lreq(2, "logging/setLevel", map[string]any{"level": "warning"}, legacyVersion, sid).do(t, srv).result(t)
	r = lreq(3, "tools/call", map[string]any{"name": "work", "_meta": map[string]any{"progressToken": "lp"}}, legacyVersion, sid).do(t, srv)
	var levels []string
	progress := 0
	for i, n := range r.notes(t) {
		switch n["method"] {
		case "notifications/message":
			levels = append(levels, str(at(n, "params", "level")))
		case "notifications/progress":
			progress++
			if str(at(n, "params", "progressToken")) != "lp" {
				t.Errorf("progress token %v", at(n, "params", "progressToken"))
			}
		}
		validateSpec(t, legacyVersion, "ServerNotification", r.Msgs[i])
	}
	if strings.Join(levels, ",") != "warning,error" || progress != 3 {
		t.Errorf("levels %v progress %d, want warning,error and 3", levels, progress)
	}
	if textOf(r.result(t)) != "finished" {
		t.Errorf("result: %s", r.Body)
	}
}

// TestLegacyProgressTokenRule checks that a legacy request follows the one
// rule of params._meta.progressToken both eras share: a string or an
// integer (2025-11-25 basic/utilities/progress, schema ProgressToken), null
// meaning none; anything else is -32602, as in 2026-07-28.
func TestLegacyProgressTokenRule(t *testing.T) {
	t.Parallel()
	srv := newNotifyServer(t)
	sid := initialize(t, srv, legacyVersion, nil, nil)
	for _, tok := range []any{1.5, map[string]any{"a": 1}, true, []any{"x"}} {
		r := lreq(2, "tools/call", map[string]any{"name": "work", "_meta": map[string]any{"progressToken": tok}}, legacyVersion, sid).do(t, srv)
		e := r.wantError(t, http.StatusOK, core.CodeInvalidParams)
		if !strings.Contains(str(e["message"]), "progressToken") {
			t.Errorf("progressToken %v: message %q does not name it", tok, e["message"])
		}
		r.wantID(t, "2")
	}
	for _, tok := range []any{"p", 7, nil} {
		r := lreq(3, "tools/call", map[string]any{"name": "work", "_meta": map[string]any{"progressToken": tok}}, legacyVersion, sid).do(t, srv)
		if textOf(r.result(t)) != "finished" {
			t.Errorf("progressToken %v: %s", tok, r.Body)
		}
		progress := 0
		for _, n := range r.notes(t) {
			if n["method"] == "notifications/progress" {
				progress++
			}
		}
		if want := map[bool]int{true: 0, false: 3}[tok == nil]; progress != want {
			t.Errorf("progressToken %v: %d progress notifications, want %d", tok, progress, want)
		}
	}
}

var _ = bytes.MinRead
