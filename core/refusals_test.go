package core_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

// TestHostileRequests sends malformed and hostile requests through
// ServeHTTP. Each case checks the HTTP status, the JSON-RPC error code, the
// id (echoed when readable, absent otherwise, never null), and that the
// server answers a valid request right after (2026-07-28 basic/index, basic/transports/streamable-http).
func TestHostileRequests(t *testing.T) {
	t.Parallel()
	const big = 2048
	type tc struct {
		name   string
		mode   core.Mode
		req    func() *testReq
		status int
		code   int    // 0: no JSON-RPC body
		id     string // raw JSON of the echoed id; "" = absent
		anyID  bool   // do not check the id
		check  func(t *testing.T, r *resp, srv *core.Server)
	}
	valid := func() *testReq { return callReq(1, "add", map[string]any{"a": 1, "b": 2}) }
	removed := func(method string) func() *testReq {
		return func() *testReq {
			return mreq(5, method, map[string]any{"uri": "test://static", "level": "info",
				"protocolVersion": modernVersion, "capabilities": map[string]any{},
				"clientInfo": map[string]any{"name": "c", "version": "1"}})
		}
	}
	cases := []tc{
		// Envelope (-32700 / -32600).
		{name: "malformed JSON", req: func() *testReq { return rawReq(`{"jsonrpc":"2.0","id":1,`, nil) },
			status: 400, code: core.CodeParseError},
		{name: "malformed JSON modern only", mode: core.ModeModern, req: func() *testReq { return rawReq(`{"jsonrpc":"2.0","id":1,"method":"tools/list"`, nil) },
			status: 400, code: core.CodeParseError},
		{name: "empty body", req: func() *testReq { return rawReq(``, nil) }, status: 400, code: core.CodeParseError},
		{name: "body is a string", req: func() *testReq { return rawReq(`"tools/list"`, nil) }, status: 400, code: core.CodeInvalidRequest},
		{name: "wrong jsonrpc", req: func() *testReq { return valid().withMsg("jsonrpc", "1.0").withMsg("id", 7) },
			status: 400, code: core.CodeInvalidRequest, id: "7"},
		{name: "jsonrpc number", req: func() *testReq { return valid().withMsg("jsonrpc", 2.0).withMsg("id", "s") },
			status: 400, code: core.CodeInvalidRequest, id: `"s"`},
		{name: "missing jsonrpc", req: func() *testReq { return valid().withMsg("jsonrpc", deleted).withMsg("id", 7) },
			status: 400, code: core.CodeInvalidRequest, id: "7"},
		{name: "id null", req: func() *testReq { return valid().withMsg("id", nil) },
			status: 400, code: core.CodeInvalidRequest},
		{name: "id fraction", req: func() *testReq { return valid().withMsg("id", json.RawMessage("1.5")) },
			status: 400, code: core.CodeInvalidRequest},
		{name: "id exponent", req: func() *testReq { return valid().withMsg("id", json.RawMessage("1e3")) },
			status: 400, code: core.CodeInvalidRequest},
		{name: "id true", req: func() *testReq { return valid().withMsg("id", true) },
			status: 400, code: core.CodeInvalidRequest},
		{name: "id object", req: func() *testReq { return valid().withMsg("id", map[string]any{"a": 1}) },
			status: 400, code: core.CodeInvalidRequest},
		{name: "id array", req: func() *testReq { return valid().withMsg("id", []int{1}) },
			status: 400, code: core.CodeInvalidRequest},
		{name: "method missing", req: func() *testReq { return valid().withMsg("method", deleted).withMsg("id", 3) },
			status: 400, code: core.CodeInvalidRequest, id: "3"},
		{name: "method number", req: func() *testReq { return valid().withMsg("method", 5).withMsg("id", 3) },
			status: 400, code: core.CodeInvalidRequest, id: "3"},
		{name: "method empty", req: func() *testReq { return valid().withMsg("method", "").withMsg("id", 3) },
			status: 400, code: core.CodeInvalidRequest, id: "3"},
		{name: "params array", req: func() *testReq { return valid().withMsg("params", []any{1, 2}).withMsg("id", "p") },
			status: 400, code: core.CodeInvalidRequest, id: `"p"`},
		{name: "params string", req: func() *testReq { return valid().withMsg("params", "x").withMsg("id", "p") },
			status: 400, code: core.CodeInvalidRequest, id: `"p"`},
		{name: "request with result", req: func() *testReq { return valid().withMsg("result", map[string]any{}) },
			status: 400, code: core.CodeInvalidRequest, id: "1"},
		{name: "batch on a modern-only server", mode: core.ModeModern,
			req:    func() *testReq { return rawReq("["+string(valid().body())+"]", nil) },
			status: 400, code: core.CodeInvalidRequest},
		{name: "client response in modern-only", mode: core.ModeModern,
			req:    func() *testReq { return rawReq(`{"jsonrpc":"2.0","id":"r1","result":{}}`, nil) },
			status: 400, code: core.CodeInvalidRequest},
		{name: "client response with 2026 header", // 2026-07-28 basic/versioning: modern → 400
			req: func() *testReq {
				return rawReq(`{"jsonrpc":"2.0","id":"r1","result":{}}`, map[string]string{core.HeaderProtocolVersion: modernVersion})
			},
			status: 400, code: core.CodeInvalidRequest, anyID: true},

		// Transport.
		{name: "body too large with Content-Length", req: func() *testReq {
			return callReq(1, "add", map[string]any{"a": 1, "b": 2, "pad": strings.Repeat("x", big)})
		}, status: http.StatusRequestEntityTooLarge, code: core.CodeInvalidRequest},
		{name: "body too large without Content-Length", req: func() *testReq {
			r := callReq(1, "add", map[string]any{"a": 1, "b": 2, "pad": strings.Repeat("x", big)})
			r.noCL = true
			return r
		}, status: http.StatusRequestEntityTooLarge, code: core.CodeInvalidRequest},
		{name: "content type text/plain", req: func() *testReq { return valid().withHeader("Content-Type", "text/plain") },
			status: http.StatusUnsupportedMediaType, code: core.CodeInvalidRequest},
		{name: "content type garbage", req: func() *testReq { return valid().withHeader("Content-Type", "application/json; ===") },
			status: http.StatusUnsupportedMediaType, code: core.CodeInvalidRequest},
		{name: "accept text/html", req: func() *testReq { return valid().withHeader("Accept", "text/html") },
			status: http.StatusNotAcceptable, code: core.CodeInvalidRequest},

		// _meta (-32602, 400).
		{name: "missing _meta", req: func() *testReq { return valid().withParam("_meta", deleted) },
			status: 400, code: core.CodeInvalidParams, id: "1"},
		{name: "missing params", req: func() *testReq { return valid().withMsg("params", deleted) },
			status: 400, code: core.CodeInvalidParams, id: "1"},
		{name: "_meta not an object", req: func() *testReq { return valid().withParam("_meta", "2026-07-28") },
			status: 400, code: core.CodeInvalidParams, id: "1"},
		{name: "missing protocolVersion", req: func() *testReq { return valid().withMeta(core.MetaProtocolVersion, deleted) },
			status: 400, code: core.CodeInvalidParams, id: "1"},
		{name: "protocolVersion not a string", req: func() *testReq { return valid().withMeta(core.MetaProtocolVersion, 2026) },
			status: 400, code: core.CodeInvalidParams, id: "1"},
		{name: "missing clientCapabilities", req: func() *testReq { return valid().withMeta(core.MetaClientCapabilities, deleted) },
			status: 400, code: core.CodeInvalidParams, id: "1"},
		{name: "clientCapabilities not an object", req: func() *testReq { return valid().withMeta(core.MetaClientCapabilities, []any{}) },
			status: 400, code: core.CodeInvalidParams, id: "1"},
		{name: "missing _meta checked before the header", mode: core.ModeModern, req: func() *testReq {
			return valid().withMeta(core.MetaProtocolVersion, deleted).withHeader(core.HeaderProtocolVersion, "")
		}, status: 400, code: core.CodeInvalidParams, id: "1"},
		{name: "missing clientInfo accepted", req: func() *testReq { return valid().withMeta(core.MetaClientInfo, deleted) },
			status: 200, id: "1", check: func(t *testing.T, r *resp, _ *core.Server) {
				if got := textOf(r.result(t)); got != "3" {
					t.Errorf("text = %q, want 3", got)
				}
			}},

		// Version and mirrored headers (-32020 / -32022, 400).
		{name: "missing MCP-Protocol-Version", req: func() *testReq { return valid().withHeader(core.HeaderProtocolVersion, "") },
			status: 400, code: core.CodeHeaderMismatch, id: "1"},
		{name: "mismatched MCP-Protocol-Version", req: func() *testReq { return valid().withHeader(core.HeaderProtocolVersion, core.ProtocolVersion20251125) },
			status: 400, code: core.CodeHeaderMismatch, id: "1"},
		{name: "header 2026 with _meta v999", req: func() *testReq { return valid().withMeta(core.MetaProtocolVersion, "v999.0.0") },
			status: 400, code: core.CodeHeaderMismatch, id: "1"},
		{name: "unsupported version", req: func() *testReq {
			return valid().withMeta(core.MetaProtocolVersion, "v999.0.0").withHeader(core.HeaderProtocolVersion, "v999.0.0")
		}, status: 400, code: core.CodeUnsupportedProtocolVersion, id: "1",
			check: func(t *testing.T, r *resp, srv *core.Server) { checkUnsupported(t, r, srv, "v999.0.0") }},
		{name: "unsupported version modern only", mode: core.ModeModern, req: func() *testReq {
			return valid().withMeta(core.MetaProtocolVersion, "v999.0.0").withHeader(core.HeaderProtocolVersion, "v999.0.0")
		}, status: 400, code: core.CodeUnsupportedProtocolVersion, id: "1",
			check: func(t *testing.T, r *resp, srv *core.Server) { checkUnsupported(t, r, srv, "v999.0.0") }},
		{name: "legacy version in _meta modern only", mode: core.ModeModern, req: func() *testReq {
			return valid().withMeta(core.MetaProtocolVersion, core.ProtocolVersion20251125).withHeader(core.HeaderProtocolVersion, core.ProtocolVersion20251125)
		}, status: 400, code: core.CodeUnsupportedProtocolVersion, id: "1",
			check: func(t *testing.T, r *resp, srv *core.Server) {
				checkUnsupported(t, r, srv, core.ProtocolVersion20251125)
			}},
		{name: "missing Mcp-Method", req: func() *testReq { return valid().withHeader(core.HeaderMethod, "") },
			status: 400, code: core.CodeHeaderMismatch, id: "1"},
		{name: "mismatched Mcp-Method", req: func() *testReq { return valid().withHeader(core.HeaderMethod, "tools/list") },
			status: 400, code: core.CodeHeaderMismatch, id: "1"},
		{name: "Mcp-Method value case differs", req: func() *testReq {
			return mreq(1, "tools/list", nil).withHeader(core.HeaderMethod, "Tools/List")
		}, status: 400, code: core.CodeHeaderMismatch, id: "1"},
		{name: "repeated Mcp-Method", req: func() *testReq {
			r := valid()
			r.hdr.Add(core.HeaderMethod, "tools/call")
			return r
		}, status: 400, code: core.CodeHeaderMismatch, id: "1"},
		{name: "header names are case-insensitive", req: func() *testReq {
			r := valid()
			r.hdr = http.Header{}
			for k, v := range map[string]string{"content-type": "application/json", "accept": "application/json, text/event-stream",
				"mcp-protocol-version": modernVersion, "MCP-METHOD": "tools/call", "mcp-NAME": "add"} {
				r.hdr.Set(k, v)
			}
			return r
		}, status: 200, id: "1"},

		// Methods (-32601, 404).
		{name: "unknown method", req: func() *testReq { return mreq(5, "unknown/method", nil) },
			status: 404, code: core.CodeMethodNotFound, id: "5"},
		{name: "removed initialize", req: removed("initialize"), status: 404, code: core.CodeMethodNotFound, id: "5"},
		{name: "removed ping", req: removed("ping"), status: 404, code: core.CodeMethodNotFound, id: "5"},
		{name: "removed logging/setLevel", req: removed("logging/setLevel"), status: 404, code: core.CodeMethodNotFound, id: "5"},
		{name: "removed resources/subscribe", req: removed("resources/subscribe"), status: 404, code: core.CodeMethodNotFound, id: "5"},
		{name: "removed resources/unsubscribe", req: removed("resources/unsubscribe"), status: 404, code: core.CodeMethodNotFound, id: "5"},

		// Mcp-Name (-32020, 400).
		{name: "missing Mcp-Name", req: func() *testReq { return valid().withHeader(core.HeaderName, "") },
			status: 400, code: core.CodeHeaderMismatch, id: "1"},
		{name: "mismatched Mcp-Name", req: func() *testReq { return valid().withHeader(core.HeaderName, "panic") },
			status: 400, code: core.CodeHeaderMismatch, id: "1"},
		{name: "Mcp-Name invalid Base64", req: func() *testReq { return valid().withHeader(core.HeaderName, "=?base64?!!!?=") },
			status: 400, code: core.CodeHeaderMismatch, id: "1"},
		{name: "Mcp-Name Base64 of another name", req: func() *testReq { return valid().withHeader(core.HeaderName, "=?base64?cGFuaWM=?=") },
			status: 400, code: core.CodeHeaderMismatch, id: "1"},
		{name: "Mcp-Name non-ASCII plain value", req: func() *testReq {
			return callReq(1, "añadir", nil).withRawHeader(core.HeaderName, "añadir")
		}, status: 400, code: core.CodeHeaderMismatch, id: "1"},
		{name: "Mcp-Name control character", req: func() *testReq { return valid().withRawHeader(core.HeaderName, "add\x01") },
			status: 400, code: core.CodeHeaderMismatch, id: "1"},
		{name: "Mcp-Name Base64 sentinel accepted", req: func() *testReq { return valid().withHeader(core.HeaderName, "=?base64?YWRk?=") },
			status: 200, id: "1", check: func(t *testing.T, r *resp, _ *core.Server) {
				if got := textOf(r.result(t)); got != "3" {
					t.Errorf("text = %q, want 3", got)
				}
			}},
		{name: "Mcp-Name on resources/read mismatched", req: func() *testReq {
			return mreq(1, "resources/read", map[string]any{"uri": "test://static"}).withHeader(core.HeaderName, "test://other")
		}, status: 400, code: core.CodeHeaderMismatch, id: "1"},
		{name: "Mcp-Name on prompts/get missing", req: func() *testReq {
			return mreq(1, "prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"who": "x"}}).withHeader(core.HeaderName, "")
		}, status: 400, code: core.CodeHeaderMismatch, id: "1"},

		// Params (-32602, 200).
		{name: "unknown tool", req: func() *testReq { return callReq(1, "nope", nil) },
			status: 200, code: core.CodeInvalidParams, id: "1"},
		{name: "tool name not a string", req: func() *testReq { return valid().withParam("name", 5).withHeader(core.HeaderName, "5") },
			status: 200, code: core.CodeInvalidParams, id: "1"},
		{name: "arguments not an object", req: func() *testReq { return valid().withParam("arguments", []any{1, 2}) },
			status: 200, code: core.CodeInvalidParams, id: "1"},
		{name: "arguments a string", req: func() *testReq { return valid().withParam("arguments", "a=1") },
			status: 200, code: core.CodeInvalidParams, id: "1"},
		{name: "invalid logLevel", req: func() *testReq { return valid().withMeta(core.MetaLogLevel, "loud") },
			status: 200, code: core.CodeInvalidParams, id: "1"},
		{name: "logLevel not a string", req: func() *testReq { return valid().withMeta(core.MetaLogLevel, 3) },
			status: 200, code: core.CodeInvalidParams, id: "1"},
		{name: "progressToken object", req: func() *testReq { return valid().withMeta("progressToken", map[string]any{"a": 1}) },
			status: 200, code: core.CodeInvalidParams, id: "1"},
		{name: "progressToken fraction", req: func() *testReq { return valid().withMeta("progressToken", 1.5) },
			status: 200, code: core.CodeInvalidParams, id: "1"},
		{name: "bad cursor", req: func() *testReq { return mreq(1, "tools/list", map[string]any{"cursor": "not-a-cursor!"}) },
			status: 200, code: core.CodeInvalidParams, id: "1"},
		{name: "cursor not a string", req: func() *testReq { return mreq(1, "tools/list", map[string]any{"cursor": 3}) },
			status: 200, code: core.CodeInvalidParams, id: "1"},
		{name: "requestState not a string", req: func() *testReq { return valid().withParam("requestState", 1) },
			status: 200, code: core.CodeInvalidParams, id: "1"},
		{name: "inputResponses not an object", req: func() *testReq { return valid().withParam("inputResponses", []any{}) },
			status: 200, code: core.CodeInvalidParams, id: "1"},
		{name: "arguments failing the input schema", req: func() *testReq { return callReq(1, "add", map[string]any{"a": "one", "b": 2}) },
			status: 200, id: "1", check: func(t *testing.T, r *resp, _ *core.Server) {
				res := r.result(t)
				if res["isError"] != true {
					t.Fatalf("isError = %v, want true: %s", res["isError"], r.Body)
				}
				msg := textOf(res)
				if !strings.Contains(msg, "/a") || !strings.Contains(msg, "integer") {
					t.Errorf("message %q does not name the field /a and the wanted type", msg)
				}
			}},
		{name: "arguments missing a required field", req: func() *testReq { return callReq(1, "add", map[string]any{"a": 1}) },
			status: 200, id: "1", check: func(t *testing.T, r *resp, _ *core.Server) {
				res := r.result(t)
				if res["isError"] != true || !strings.Contains(textOf(res), "b") {
					t.Errorf("want an isError result naming b: %s", r.Body)
				}
			}},

		// Notifications, other HTTP methods, Origin.
		{name: "notification", req: func() *testReq { return mreq(nil, "notifications/initialized", nil) },
			status: http.StatusAccepted, check: func(t *testing.T, r *resp, _ *core.Server) {
				if len(r.Body) != 0 {
					t.Errorf("body = %q, want empty", r.Body)
				}
			}},
		{name: "notification modern only", mode: core.ModeModern, req: func() *testReq { return mreq(nil, "notifications/cancelled", map[string]any{"requestId": 1}) },
			status: http.StatusAccepted, check: func(t *testing.T, r *resp, _ *core.Server) {
				if len(r.Body) != 0 {
					t.Errorf("body = %q, want empty", r.Body)
				}
			}},
		{name: "foreign Origin before anything else", req: func() *testReq {
			return rawReq(`{not json`, map[string]string{"Origin": "http://evil.example.com", "Content-Type": "text/plain"})
		}, status: http.StatusForbidden, code: core.CodeInvalidRequest},

		// Handler failures.
		{name: "handler panic", req: func() *testReq { return callReq(1, "panic", nil) },
			status: 200, code: core.CodeInternalError, id: "1", check: func(t *testing.T, r *resp, _ *core.Server) {
				if strings.Contains(string(r.Body), "secret") || strings.Contains(string(r.Body), "deadbeef") {
					t.Errorf("panic text leaked: %s", r.Body)
				}
			}},
		{name: "plain error", req: func() *testReq { return callReq(1, "plain_error", nil) },
			status: 200, code: core.CodeInternalError, id: "1", check: func(t *testing.T, r *resp, _ *core.Server) {
				if strings.Contains(string(r.Body), "hunter2") || strings.Contains(string(r.Body), "secret") {
					t.Errorf("error text leaked: %s", r.Body)
				}
			}},
		{name: "InvalidParamsError passed through", req: func() *testReq { return callReq(1, "invalid_params", nil) },
			status: 200, code: core.CodeInvalidParams, id: "1", check: func(t *testing.T, r *resp, _ *core.Server) {
				if got := str(r.rpcError(t)["message"]); got != `the widget "w1" is unknown` {
					t.Errorf("message = %q", got)
				}
			}},
		{name: "InternalError passed through", req: func() *testReq { return callReq(1, "server_error", nil) },
			status: 200, code: core.CodeInternalError, id: "1", check: func(t *testing.T, r *resp, _ *core.Server) {
				if got := str(r.rpcError(t)["message"]); got != "the upstream service is down" {
					t.Errorf("message = %q", got)
				}
			}},
		{name: "ToolError is a result", req: func() *testReq { return callReq(1, "tool_error", nil) },
			status: 200, id: "1", check: func(t *testing.T, r *resp, _ *core.Server) {
				res := r.result(t)
				if res["isError"] != true || textOf(res) != "the date 2020-01-01 is in the past" {
					t.Errorf("want isError result with the message: %s", r.Body)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newFixture(t, &core.ServerOptions{Mode: c.mode, MaxRequestBytes: big})
			r := c.req().do(t, srv)
			if r.Status != c.status {
				t.Errorf("HTTP status = %d, want %d; body %s", r.Status, c.status, r.Body)
			}
			if c.code != 0 {
				r.wantError(t, c.status, c.code)
				if ct := r.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type = %q, want application/json", ct)
				}
			} else if c.status == 200 {
				if _, ok := r.final(t)["result"]; !ok {
					t.Errorf("want a result: %s", r.Body)
				}
			}
			if len(r.Msgs) > 0 && !c.anyID {
				r.wantID(t, c.id)
				if bytesContain(r.Body, `"id":null`) {
					t.Errorf(`body holds "id":null: %s`, r.Body)
				}
			}
			if c.check != nil {
				c.check(t, r, srv)
			}
			assertServes(t, srv)
		})
	}
}

func bytesContain(b []byte, s string) bool { return strings.Contains(string(b), s) }

// checkUnsupported checks the data of a -32022 answer (2026-07-28 basic/versioning): a
// supported list that is a subset of discover's supportedVersions, and the
// requested version.
func checkUnsupported(t *testing.T, r *resp, srv *core.Server, requested string) {
	t.Helper()
	data := at(r.rpcError(t), "data")
	if got := str(at(data, "requested")); got != requested {
		t.Errorf("data.requested = %q, want %q", got, requested)
	}
	sup, ok := at(data, "supported").([]any)
	if !ok || len(sup) == 0 {
		t.Fatalf("data.supported = %v, want a non-empty array", at(data, "supported"))
	}
	d := mreq("d", "server/discover", nil).do(t, srv)
	offered := map[string]bool{}
	for _, v := range at(d.result(t), "supportedVersions").([]any) {
		offered[str(v)] = true
	}
	for _, v := range sup {
		if !offered[str(v)] {
			t.Errorf("data.supported lists %v, which server/discover does not offer (%v)", v, offered)
		}
	}
	if !offered[modernVersion] {
		t.Errorf("server/discover does not offer %s", modernVersion)
	}
}

// TestOtherHTTPMethods checks GET, DELETE and unknown methods (2026-07-28
// basic/transports/streamable-http).
func TestOtherHTTPMethods(t *testing.T) {
	t.Parallel()
	for _, mode := range []core.Mode{core.ModeModern, core.ModeAuto} {
		srv := newFixture(t, &core.ServerOptions{Mode: mode})
		for _, m := range []string{http.MethodGet, http.MethodDelete, http.MethodPut, http.MethodPatch} {
			if mode == core.ModeAuto && (m == http.MethodGet || m == http.MethodDelete) {
				continue // legacy sessions; see the legacy tests
			}
			t.Run(mode.String()+"/"+m, func(t *testing.T) {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(m, "/mcp", nil)
				req.Header.Set("Accept", "text/event-stream")
				srv.ServeHTTP(rec, req)
				if rec.Code != http.StatusMethodNotAllowed {
					t.Fatalf("HTTP %d, want 405", rec.Code)
				}
				allow := rec.Header().Get("Allow")
				if !strings.Contains(allow, "POST") {
					t.Errorf("Allow = %q, want POST listed", allow)
				}
				if mode == core.ModeModern && (strings.Contains(allow, "GET") || strings.Contains(allow, "DELETE")) {
					// RFC 9110 §15.5.6: Allow lists the methods the resource supports.
					t.Errorf("Allow = %q on a modern-only server, which answers GET and DELETE with 405", allow)
				}
				assertServes(t, srv)
			})
		}
	}
}
