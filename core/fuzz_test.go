package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

var fuzzServer struct {
	once sync.Once
	srv  *core.Server
}

// FuzzServeHTTP sends arbitrary bodies and routing headers through the
// whole server. Invariants: no panic; a JSON body is one valid JSON-RPC
// response (or a batch of them) with no "id": null; an SSE body is valid
// JSON events ending with a response; a 202 has no body; a 200 answer to a
// request with a valid id carries that id.
func FuzzServeHTTP(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "wire", "*", "*.txtar"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		req := parseTxtar(data).file("request")
		if req == nil {
			continue
		}
		s := string(req.Data)
		head, body, _ := strings.Cut(s, "\n\n")
		hv := func(name string) string {
			for _, line := range strings.Split(head, "\n") {
				if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, name) {
					return strings.TrimSpace(v)
				}
			}
			return ""
		}
		f.Add([]byte(strings.TrimSpace(body)), hv(core.HeaderProtocolVersion), hv(core.HeaderMethod), hv(core.HeaderName))
	}
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,`, `[]`, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `{"jsonrpc":"2.0","id":null,"method":"x"}`,
		`{"jsonrpc":"2.0","id":"r","result":{}}`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`} {
		f.Add([]byte(s), "", "", "")
		f.Add([]byte(s), modernVersion, "tools/call", "add")
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":1,"io.modelcontextprotocol/logLevel":"debug"}}}`),
		modernVersion, "tools/call", "add")
	f.Add([]byte(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"add","requestState":"v1.local.e30.AAAA","inputResponses":{"x":{}},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`),
		modernVersion, "tools/call", "add")
	// Legacy requests whose _meta the one scan reads: progress tokens of
	// every type, a non-object _meta, a repeated _meta, reserved keys.
	for _, meta := range []string{`{"progressToken":"p"}`, `{"progressToken":7}`, `{"progressToken":1.5}`, `{"progressToken":{"a":1}}`,
		`{"progressToken":null}`, `"x"`, `{"io.modelcontextprotocol/protocolVersion":5}`} {
		f.Add([]byte(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},"_meta":`+meta+`}}`),
			core.ProtocolVersion20251125, "", "")
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":9,"method":"ping","params":{"_meta":{"progressToken":true},"_meta":{"progressToken":"p"}}}`), "", "", "")
	// The Tasks extension's methods: a task tool called as a task, and
	// tasks/* with good, odd and hostile params.
	taskMeta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	f.Add([]byte(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"task_job","arguments":{},`+taskMeta+`}}`), modernVersion, "tools/call", "task_job")
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		for _, p := range []string{`"taskId":"t1"`, `"taskId":7`, `"taskId":"t1","inputResponses":{"a":{"action":"accept"}}`, `"taskId":"t1","inputResponses":[1]`, `"taskId":"t1","taskId":"t2"`} {
			f.Add([]byte(`{"jsonrpc":"2.0","id":11,"method":"`+m+`","params":{`+p+`,`+taskMeta+`}}`), modernVersion, m, "t1")
		}
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":12,"method":"subscriptions/listen","params":{"notifications":{"taskIds":["t1","t2"]},`+taskMeta+`}}`), modernVersion, "subscriptions/listen", "")
	f.Fuzz(func(t *testing.T, body []byte, version, method, name string) {
		fuzzServer.once.Do(func() {
			fuzzServer.srv = newFuzzServer(t)
		})
		req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range map[string]string{core.HeaderProtocolVersion: version, core.HeaderMethod: method, core.HeaderName: name} {
			if v != "" {
				req.Header[http.CanonicalHeaderKey(k)] = []string{v}
			}
		}
		rec := httptest.NewRecorder()
		fuzzServer.srv.ServeHTTP(rec, req)
		checkFuzzResponse(t, body, rec)
	})
}

func newFuzzServer(t testing.TB) *core.Server {
	srv := newFixture(t, &core.ServerOptions{StreamKeepAlive: -1, MaxRequestBytes: 1 << 16})
	core.AddTool(srv, &core.Tool{Name: "get_weather", Description: "Weather."},
		func(ctx context.Context, req *core.CallToolRequest, in weatherArgs) (Weather, error) {
			return Weather{Conditions: in.Location}, nil
		})
	core.AddTool(srv, &core.Tool{Name: "task_job", Description: "A task."},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) { return "ok", nil },
		&core.ToolOptions{TaskSupport: core.TaskOptional})
	srv.Close() // listen streams end at once
	return srv
}

func checkFuzzResponse(t *testing.T, body []byte, rec *httptest.ResponseRecorder) {
	t.Helper()
	out := rec.Body.Bytes()
	ct := rec.Header().Get("Content-Type")
	switch {
	case rec.Code == http.StatusAccepted:
		if len(out) != 0 {
			t.Fatalf("202 with a body: %q", out)
		}
		return
	case strings.HasPrefix(ct, "text/event-stream"):
		if rec.Code != 200 {
			t.Fatalf("SSE with HTTP %d", rec.Code)
		}
		evs, err := parseSSE(out)
		if err != nil || len(evs) == 0 {
			t.Fatalf("bad SSE body (%v): %q", err, out)
		}
		last := evs[len(evs)-1]
		checkResponseMessage(t, last)
		checkIDEcho(t, body, last)
		return
	case strings.HasPrefix(ct, "application/json"):
		if !json.Valid(out) {
			t.Fatalf("invalid JSON response: %q", out)
		}
	default:
		if rec.Code < 400 {
			t.Fatalf("HTTP %d with Content-Type %q: %q", rec.Code, ct, out)
		}
		return
	}
	if bytes.HasPrefix(bytes.TrimSpace(out), []byte("[")) {
		var batch []json.RawMessage
		if err := json.Unmarshal(out, &batch); err != nil || len(batch) == 0 {
			t.Fatalf("bad batch response %q", out)
		}
		for _, m := range batch {
			checkResponseMessage(t, m)
		}
		return
	}
	checkResponseMessage(t, out)
	if rec.Code == 200 {
		checkIDEcho(t, body, out)
	}
}

// checkResponseMessage checks one JSON-RPC response.
func checkResponseMessage(t *testing.T, msg []byte) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(msg, &m); err != nil {
		t.Fatalf("response is not an object: %q", msg)
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		t.Fatalf("jsonrpc = %s", m["jsonrpc"])
	}
	if id, ok := m["id"]; ok && string(id) == "null" {
		t.Fatalf(`"id": null in %s`, msg)
	}
	_, hasResult := m["result"]
	_, hasError := m["error"]
	if hasResult == hasError {
		t.Fatalf("want exactly one of result and error: %s", msg)
	}
	if hasError {
		var e struct {
			Code    *int    `json:"code"`
			Message *string `json:"message"`
		}
		if json.Unmarshal(m["error"], &e) != nil || e.Code == nil || e.Message == nil {
			t.Fatalf("bad error object: %s", m["error"])
		}
	}
	if hasResult && m["result"][0] != '{' {
		t.Fatalf("result is not an object: %s", m["result"])
	}
}

// checkIDEcho checks that a response to a request with a valid id echoes it.
func checkIDEcho(t *testing.T, reqBody, resp []byte) {
	t.Helper()
	var req map[string]json.RawMessage
	if json.Unmarshal(reqBody, &req) != nil {
		return
	}
	id, ok := req["id"]
	if !ok || len(id) == 0 || string(id) == "null" {
		return
	}
	if _, isReq := req["method"]; !isReq {
		return
	}
	var r map[string]json.RawMessage
	json.Unmarshal(resp, &r)
	got, ok := r["id"]
	if !ok {
		return // the id could not be read (e.g. not a valid id)
	}
	var cid, cgot bytes.Buffer
	json.Compact(&cid, id)
	json.Compact(&cgot, got)
	if cid.String() != cgot.String() {
		t.Fatalf("response id %s, request id %s", got, id)
	}
}
