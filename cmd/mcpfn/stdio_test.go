package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/core"
)

// stdioServer serves a real core.Server in mode, with the tools the bridge
// tests call, and records each HTTP request (method, JSON-RPC method,
// session id). The "block" tool reports on block.
func stdioServer(t *testing.T, mode core.Mode) (url string, seen func() []string, block blockTool) {
	srv := core.NewServer(core.Implementation{Name: "stdio-test", Version: "1"},
		&core.ServerOptions{Mode: mode, Logger: slog.New(slog.DiscardHandler)})
	core.AddTool(srv, &core.Tool{Name: "progress"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
		for i := 1; i <= 3; i++ {
			if err := req.NotifyProgress(ctx, float64(i), 3, fmt.Sprintf("step %d", i)); err != nil {
				return "", err
			}
		}
		return "done", nil
	})
	core.AddTool(srv, &core.Tool{Name: "ask"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
		if r, ok := req.Input.Elicitation("q"); ok {
			b, _ := json.Marshal(r.Content)
			return r.Action + string(b), nil
		}
		return "", core.InputRequired(core.InputRequests{"q": core.ElicitForm("name?",
			json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`))}, "")
	})
	core.AddTool(srv, &core.Tool{Name: "roots"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
		if r, ok := req.Input.Roots("r"); ok {
			var uris []string
			for _, root := range r.Roots {
				uris = append(uris, root.URI)
			}
			return "roots:" + strings.Join(uris, ","), nil
		}
		return "", core.InputRequired(core.InputRequests{"r": core.ListRoots()}, "")
	})
	core.AddTool(srv, &core.Tool{Name: "sample"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
		if r, ok := req.Input.Sampling("s"); ok {
			return "model:" + r.Text(), nil
		}
		return "", core.InputRequired(core.InputRequests{"s": core.SampleText("capital of France?", 10)}, "")
	})
	core.AddTool(srv, &core.Tool{Name: "log"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
		req.Log(ctx, core.LevelInfo, "test", "hello")
		return "logged", nil
	})
	type headerArgs struct {
		Region string `json:"region" jsonschema_extras:"x-mcp-header=Region"`
	}
	core.AddTool(srv, &core.Tool{Name: "where"}, func(ctx context.Context, req *core.CallToolRequest, in headerArgs) (string, error) {
		return "region=" + in.Region, nil
	})
	block = blockTool{started: make(chan struct{}, 4), ended: make(chan struct{}, 4)}
	core.AddTool(srv, &core.Tool{Name: "block"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
		block.started <- struct{}{}
		<-ctx.Done()
		block.ended <- struct{}{}
		return "", ctx.Err()
	})
	core.AddTool(srv, &core.Tool{Name: "change"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
		core.AddTool(srv, &core.Tool{Name: "added"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
			return "added", nil
		})
		return "changed", nil
	})
	url, seen = serveRecording(t, srv, func(r *http.Request, body []byte) string {
		line := r.Method
		if r.Method == http.MethodPost {
			var m struct {
				Method string `json:"method"`
			}
			json.Unmarshal(body, &m)
			line += " " + m.Method
		}
		if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
			line += " sid=" + sid
		}
		return line
	})
	return url, seen, block
}

// serveRecording serves srv on an httptest server that records describe(r,
// body) for each HTTP request before serving it (body is the request's body
// for a POST, nil otherwise). It returns the MCP endpoint's URL and a
// function that returns a copy of the records so far.
func serveRecording(t *testing.T, srv *core.Server, describe func(r *http.Request, body []byte) string) (url string, seen func() []string) {
	var mu sync.Mutex
	var log []string
	ts := httptest.NewServer(nethttp.NewHandler(srv, &nethttp.Options{Middleware: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var body []byte
			if r.Method == http.MethodPost {
				body, _ = io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
			}
			line := describe(r, body)
			mu.Lock()
			log = append(log, line)
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	}}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp", func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), log...)
	}
}

// blockTool reports each call of the "block" tool when it starts, and when
// its context ends.
type blockTool struct{ started, ended chan struct{} }

// host plays a stdio MCP host: it runs the bridge in-process (run, as
// main does) on pipes, writes lines to its stdin and reads its stdout.
type host struct {
	t      *testing.T
	stdin  *io.PipeWriter
	msgs   chan map[string]json.RawMessage
	code   chan int
	stderr *lockedWriter
	buf    *bytes.Buffer
}

func startHost(t *testing.T, args ...string) *host {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	buf := &bytes.Buffer{}
	h := &host{t: t, stdin: inW, msgs: make(chan map[string]json.RawMessage, 64), code: make(chan int, 1),
		buf: buf, stderr: &lockedWriter{w: buf}}
	go func() {
		h.code <- run(context.Background(), append([]string{"stdio"}, args...), inR, outW, h.stderr)
		outW.Close()
	}()
	go func() {
		defer close(h.msgs)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if bytes.HasPrefix(sc.Bytes(), []byte("[")) {
				// A batch's answer: one array.
				m = map[string]json.RawMessage{"batch": append(json.RawMessage(nil), sc.Bytes()...)}
			} else if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("stdout line is not one JSON-RPC message: %q", sc.Text())
				continue
			}
			h.msgs <- m
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		for range h.msgs {
		}
	})
	return h
}

func (h *host) send(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.stdin, line+"\n"); err != nil {
		h.t.Fatalf("writing to the bridge: %v", err)
	}
}

// next returns the bridge's next message; a bridge silent for a minute
// fails the test (a bound against hanging, not a synchronisation).
func (h *host) next() map[string]json.RawMessage {
	h.t.Helper()
	select {
	case m, ok := <-h.msgs:
		if !ok {
			h.t.Fatalf("the bridge's stdout ended; stderr:\n%s", h.stderrText())
		}
		return m
	case <-time.After(time.Minute):
		h.t.Fatalf("no message from the bridge; stderr:\n%s", h.stderrText())
	}
	return nil
}

func (h *host) stderrText() string {
	h.stderr.mu.Lock()
	defer h.stderr.mu.Unlock()
	return h.buf.String()
}

// call sends a request and returns its response, answering the bridge's
// requests with answer and collecting the notifications that come first.
func (h *host) call(id int, method, params string, answer func(method string, params json.RawMessage) string) (resp map[string]json.RawMessage, notes []map[string]json.RawMessage) {
	h.t.Helper()
	h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
	for {
		m := h.next()
		switch {
		case m["method"] != nil && m["id"] != nil:
			var meth string
			json.Unmarshal(m["method"], &meth)
			if answer == nil {
				h.t.Fatalf("unexpected request from the bridge: %s %s", meth, m["params"])
			}
			h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m["id"], answer(meth, m["params"])))
		case m["method"] != nil:
			notes = append(notes, m)
		case string(m["id"]) == fmt.Sprint(id):
			return m, notes
		default:
			h.t.Fatalf("a response to another request: %v", m)
		}
	}
}

// exit closes stdin and returns the exit status.
func (h *host) exit() int {
	h.t.Helper()
	h.stdin.Close()
	select {
	case code := <-h.code:
		return code
	case <-time.After(time.Minute):
		h.t.Fatal("the bridge did not exit at EOF")
	}
	return -1
}

const modernMetaJSON = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"roots":{}}`

func text(t *testing.T, resp map[string]json.RawMessage) string {
	t.Helper()
	if resp["error"] != nil {
		t.Fatalf("error response: %s", resp["error"])
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(resp["result"], &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("result %s", resp["result"])
	}
	return r.Content[0].Text
}

func errCode(resp map[string]json.RawMessage) int {
	var e struct {
		Code int `json:"code"`
	}
	if json.Unmarshal(resp["error"], &e) != nil {
		return 0
	}
	return e.Code
}

// TestStdioModern: a host speaking 2026-07-28 over stdio reaches a
// dual-era server through the bridge: its requests are relayed as they
// are (headers added), progress arrives before the response, an
// input_required result goes back for the host to answer, a cancelled
// request ends on the server and gets no response; bad lines get errors
// and the bridge goes on; EOF exits 0.
func TestStdioModern(t *testing.T) {
	url, seen, block := stdioServer(t, core.ModeAuto)
	h := startHost(t, url)

	resp, _ := h.call(1, "server/discover", `{`+modernMetaJSON+`}}`, nil)
	if !bytes.Contains(resp["result"], []byte(`"supportedVersions"`)) {
		t.Fatalf("server/discover: %v", resp)
	}
	resp, _ = h.call(2, "tools/list", `{`+modernMetaJSON+`}}`, nil)
	if !bytes.Contains(resp["result"], []byte(`"name":"progress"`)) || !bytes.Contains(resp["result"], []byte(`"resultType":"complete"`)) {
		t.Fatalf("tools/list: %s", resp["result"])
	}
	meta := strings.Replace(modernMetaJSON, `"_meta":{`, `"_meta":{"progressToken":"tok-1",`, 1)
	resp, notes := h.call(3, "tools/call", `{"name":"progress",`+meta+`}}`, nil)
	if got := text(t, resp); got != "done" {
		t.Fatalf("progress result %q", got)
	}
	if len(notes) != 3 {
		t.Fatalf("notifications before the response: %v", notes)
	}
	for i, n := range notes {
		var p struct {
			Token    string  `json:"progressToken"`
			Progress float64 `json:"progress"`
		}
		json.Unmarshal(n["params"], &p)
		if string(n["method"]) != `"notifications/progress"` || p.Token != "tok-1" || p.Progress != float64(i+1) {
			t.Fatalf("notification %d: %s %s", i, n["method"], n["params"])
		}
	}
	// Multi round-trip: the host answers the input request itself.
	resp, _ = h.call(4, "tools/call", `{"name":"ask",`+modernMetaJSON+`}}`, nil)
	var ir struct {
		ResultType   string          `json:"resultType"`
		RequestState json.RawMessage `json:"requestState"`
	}
	json.Unmarshal(resp["result"], &ir)
	if ir.ResultType != "input_required" {
		t.Fatalf("ask: %s", resp["result"])
	}
	stateMember := ""
	if ir.RequestState != nil {
		stateMember = `"requestState":` + string(ir.RequestState) + `,`
	}
	resp, _ = h.call(5, "tools/call", `{"name":"ask",`+stateMember+
		`"inputResponses":{"q":{"action":"accept","content":{"name":"Ada"}}},`+modernMetaJSON+`}}`, nil)
	if got := text(t, resp); got != `accept{"name":"Ada"}` {
		t.Fatalf("ask retried: %q", got)
	}
	// x-mcp-header: the bridge mirrors the argument into Mcp-Param-Region.
	resp, _ = h.call(6, "tools/call", `{"name":"where","arguments":{"region":"Zürich"},`+modernMetaJSON+`}}`, nil)
	if got := text(t, resp); got != "region=Zürich" {
		t.Fatalf("where: %q", got)
	}

	// Bad input: each line gets its error, without an id, and the bridge
	// goes on.
	h.send(`{"jsonrpc":"2.0","id":7,"method":`)
	if m := h.next(); errCode(m) != -32700 || m["id"] != nil {
		t.Fatalf("malformed line: %v", m)
	}
	h.send(`[1]`)
	if m := h.next(); !bytes.Contains(m["batch"], []byte(`"code":-32600`)) {
		t.Fatalf("batch of junk: %v", m)
	}
	resp, _ = h.call(9, "tools/list", `{`+modernMetaJSON+`}}`, nil)
	if resp["result"] == nil {
		t.Fatalf("after bad lines: %v", resp)
	}

	// Cancellation: notifications/cancelled closes the request's stream;
	// the tool's context ends, and no response is written.
	h.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"block",` + meta + `}}}`)
	<-block.started
	// The id of a request in flight is refused, without an id.
	h.send(`{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{` + modernMetaJSON + `}}}`)
	if m := h.next(); errCode(m) != -32600 || m["id"] != nil {
		t.Fatalf("a second request 10: %v", m)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":10}}`)
	<-block.ended
	resp, _ = h.call(11, "tools/list", `{`+modernMetaJSON+`}}`, nil)
	if resp["result"] == nil {
		t.Fatalf("after the cancellation: %v", resp)
	}
	if code := h.exit(); code != 0 {
		t.Fatalf("exit %d at EOF; stderr:\n%s", code, h.stderrText())
	}
	for m := range h.msgs {
		t.Fatalf("after EOF: %v (the cancelled request got a response?)", m)
	}
	for _, l := range seen() {
		if strings.HasPrefix(l, "GET") || strings.HasPrefix(l, "DELETE") || strings.Contains(l, "sid=") {
			t.Fatalf("a 2026-07-28 relay used a 2025 session: %q", seen())
		}
	}
}

// TestStdioLegacy: a host speaking a 2025 revision (initialize) reaches
// a dual-era server and a 2025-only one through a 2025 session of its
// version (server requests arrive on the POST's stream and on the GET
// stream, EOF ends the session with DELETE), and a 2026-07-28-only server
// through translation (input_required answered by asking the host,
// subscriptions/listen for list changes, logging/setLevel as the level of
// later requests): in each, progress carries the host's token,
// elicitation, roots and sampling are asked of the host, log messages
// reach it, and results carry nothing of 2026-07-28.
func TestStdioLegacy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mode    core.Mode
		version string
	}{
		{"dual-era server", core.ModeAuto, "2025-06-18"},
		{"2025 server", core.ModeLegacy, "2025-11-25"},
		{"2026-07-28 server", core.ModeModern, "2025-11-25"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, seen, _ := stdioServer(t, tc.mode)
			h := startHost(t, url)
			resp, _ := h.call(1, "initialize", `{"protocolVersion":"`+tc.version+`","capabilities":{"elicitation":{},"roots":{},"sampling":{}},"clientInfo":{"name":"test-host","version":"1"}}`, nil)
			var ir struct {
				ProtocolVersion string                     `json:"protocolVersion"`
				Capabilities    map[string]json.RawMessage `json:"capabilities"`
				ServerInfo      struct{ Name string }      `json:"serverInfo"`
			}
			if err := json.Unmarshal(resp["result"], &ir); err != nil || ir.ProtocolVersion != tc.version || ir.ServerInfo.Name != "stdio-test" {
				t.Fatalf("initialize: %v", resp)
			}
			if ir.Capabilities["tools"] == nil || ir.Capabilities["extensions"] != nil {
				t.Fatalf("capabilities: %s", resp["result"])
			}
			h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

			resp, _ = h.call(2, "tools/list", `{}`, nil)
			if !bytes.Contains(resp["result"], []byte(`"name":"progress"`)) || bytes.Contains(resp["result"], []byte(`resultType`)) ||
				bytes.Contains(resp["result"], []byte(`ttlMs`)) {
				t.Fatalf("tools/list: %s", resp["result"])
			}
			resp, notes := h.call(3, "tools/call", `{"name":"progress","_meta":{"progressToken":7}}`, nil)
			if got := text(t, resp); got != "done" || bytes.Contains(resp["result"], []byte(`resultType`)) {
				t.Fatalf("progress: %s", resp["result"])
			}
			var progress []string
			for _, n := range notes {
				if string(n["method"]) == `"notifications/progress"` {
					progress = append(progress, string(n["params"]))
				}
			}
			if len(progress) != 3 || !strings.HasPrefix(progress[2], `{"progressToken":7,"progress":3,"total":3`) {
				t.Fatalf("progress notifications: %q", progress)
			}

			// Elicitation and roots: the bridge asks the host.
			var asked []string
			answer := func(method string, params json.RawMessage) string {
				asked = append(asked, method)
				switch method {
				case "elicitation/create":
					var p struct {
						Message string          `json:"message"`
						Mode    *string         `json:"mode"`
						Schema  json.RawMessage `json:"requestedSchema"`
					}
					json.Unmarshal(params, &p)
					if p.Message != "name?" || p.Schema == nil || (p.Mode != nil) != (tc.version == "2025-11-25") {
						t.Errorf("elicitation/create params %s", params)
					}
					return `{"action":"accept","content":{"name":"Ada"}}`
				case "roots/list":
					return `{"roots":[{"uri":"file:///work","name":"work"}]}`
				case "sampling/createMessage":
					if !bytes.Contains(params, []byte("capital of France?")) {
						t.Errorf("sampling/createMessage params %s", params)
					}
					return `{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m"}`
				}
				t.Errorf("the bridge asked %s", method)
				return `{}`
			}
			resp, _ = h.call(4, "tools/call", `{"name":"ask"}`, answer)
			if got := text(t, resp); got != `accept{"name":"Ada"}` {
				t.Fatalf("ask: %q", got)
			}
			resp, _ = h.call(5, "tools/call", `{"name":"roots","arguments":{}}`, answer)
			if got := text(t, resp); got != "roots:file:///work" {
				t.Fatalf("roots: %q", got)
			}
			resp, _ = h.call(51, "tools/call", `{"name":"sample"}`, answer)
			if got := text(t, resp); got != "model:Paris" {
				t.Fatalf("sample: %q", got)
			}
			if strings.Join(asked, " ") != "elicitation/create roots/list sampling/createMessage" {
				t.Fatalf("the bridge asked %q", asked)
			}
			// Log messages, once the host asked for them.
			resp, _ = h.call(52, "logging/setLevel", `{"level":"info"}`, nil)
			if string(resp["result"]) != `{}` {
				t.Fatalf("logging/setLevel: %v", resp)
			}
			resp, notes = h.call(53, "tools/call", `{"name":"log"}`, nil)
			if got := text(t, resp); got != "logged" || len(notes) != 1 || string(notes[0]["method"]) != `"notifications/message"` ||
				!bytes.Contains(notes[0]["params"], []byte(`"data":"hello"`)) {
				t.Fatalf("log: %q, notifications %v", got, notes)
			}
			resp, _ = h.call(6, "tools/call", `{"name":"where","arguments":{"region":"Zürich"}}`, nil)
			if got := text(t, resp); got != "region=Zürich" {
				t.Fatalf("where: %q", got)
			}
			resp, _ = h.call(7, "ping", `{}`, nil)
			if string(resp["result"]) != `{}` {
				t.Fatalf("ping: %v", resp)
			}
			if tc.mode == core.ModeModern {
				// subscriptions/listen carries resources/subscribe and
				// the list changes; the call returns once acknowledged.
				resp, _ = h.call(8, "resources/subscribe", `{"uri":"test://a"}`, nil)
				if string(resp["result"]) != `{}` {
					t.Fatalf("resources/subscribe: %v", resp)
				}
			}
			// A change of the tool list reaches the host (the GET stream,
			// or the subscription), before or after the call's response.
			h.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"change"}}`)
			for gotResp, gotNote := false, false; !gotResp || !gotNote; {
				m := h.next()
				switch {
				case string(m["id"]) == "10":
					gotResp = true
				case string(m["method"]) == `"notifications/tools/list_changed"`:
					gotNote = true
				}
			}
			if code := h.exit(); code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, h.stderrText())
			}
			log := seen()
			if tc.mode == core.ModeModern {
				for _, l := range log {
					if strings.Contains(l, "initialize") || strings.Contains(l, "sid=") {
						t.Fatalf("a 2025 request to a 2026-07-28 server: %q", log)
					}
				}
				return
			}
			// The session: initialize, then every request in it; GET
			// stream; DELETE at the end.
			var sid string
			for _, l := range log {
				if i := strings.Index(l, "sid="); i >= 0 {
					sid = l[i:]
					break
				}
			}
			if sid == "" || !contains(log, "GET "+sid) || log[len(log)-1] != "DELETE "+sid {
				t.Fatalf("session traffic: %q", log)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestStdioFallback: a host that probes with server/discover (2026-07-28
// basic/transports/stdio §Backward Compatibility) gets an error other than
// the modern ones from a bridge to a 2025-only server, and falls back to
// initialize; a batch gets one array.
func TestStdioFallback(t *testing.T) {
	url, _, _ := stdioServer(t, core.ModeLegacy)
	h := startHost(t, url)
	resp, _ := h.call(1, "server/discover", `{`+modernMetaJSON+`}}`, nil)
	if errCode(resp) != -32601 {
		t.Fatalf("server/discover: %v", resp)
	}
	resp, _ = h.call(2, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}`, nil)
	if !bytes.Contains(resp["result"], []byte(`"protocolVersion":"2025-11-25"`)) {
		t.Fatalf("initialize: %v", resp)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp, _ = h.call(3, "tools/call", `{"name":"progress"}`, nil)
	if got := text(t, resp); got != "done" {
		t.Fatalf("call: %q", got)
	}
	// A batch (2025-03-26) is answered with one array of its responses.
	h.send(`[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/progress","params":{}},` +
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"progress"}}]`)
	m := h.next()
	var batch []map[string]json.RawMessage
	if json.Unmarshal(m["batch"], &batch) != nil || len(batch) != 2 {
		t.Fatalf("batch answer: %v", m)
	}
	ids := map[string]bool{}
	for _, r := range batch {
		ids[string(r["id"])] = r["result"] != nil
	}
	if !ids["4"] || !ids["5"] {
		t.Fatalf("batch answer: %s", m["batch"])
	}
	if code := h.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestStdioLines: the bounds of the stdio side, without a server: a line
// over the bound gets -32600, invalid JSON -32700, an empty batch -32600,
// a response to nothing is ignored, and the bridge goes on; EOF exits 0.
func TestStdioLines(t *testing.T) {
	inR, inW := io.Pipe()
	var out bytes.Buffer
	b := &bridge{url: "http://127.0.0.1:1/mcp", out: &lineWriter{w: &out}, log: io.Discard, maxLine: 64}
	done := make(chan int)
	go func() { done <- b.serve(context.Background(), inR) }()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`+strings.Repeat("x", 100)+`"}}`+"\n")
	io.WriteString(inW, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\r\n")
	io.WriteString(inW, "not json\n\n")
	io.WriteString(inW, "[]\n")
	io.WriteString(inW, `{"jsonrpc":"2.0","id":99,"result":{}}`+"\n")
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`+"\n")
	io.WriteString(inW, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`+"\n")
	inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	// Responses come in the order the lines were read, but for the two
	// requests the bridge runs concurrently (ids 2 and 3).
	want := []string{
		`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: message larger than 64 bytes"}}`,
		`{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`,
		`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: empty batch"}}`,
		`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: an id is a string or an integer"}}`,
	}
	var rest []string
	for _, l := range got {
		if strings.Contains(l, `"id":`) {
			rest = append(rest, l)
		}
	}
	if len(got) != 6 || len(rest) != 2 {
		t.Fatalf("output:\n%s", out.String())
	}
	i := 0
	for _, l := range got {
		if !strings.Contains(l, `"id":`) {
			if l != want[i] {
				t.Fatalf("line %d: %s, want %s", i, l, want[i])
			}
			i++
		}
	}
	for _, l := range rest {
		switch {
		case strings.Contains(l, `"id":2,"result":{}`):
		case strings.Contains(l, `"id":3,"error":{"code":-32602`):
		default:
			t.Fatalf("response %s", l)
		}
	}
}

// TestStdioReadLine: lines at the bound and just over it, CRLF, and a
// last line without a line end.
func TestStdioReadLine(t *testing.T) {
	in := "12345\r\n123456\n1234\n123456789\nabc"
	r := bufio.NewReaderSize(strings.NewReader(in), 16)
	type res struct {
		line string
		long bool
	}
	var got []res
	for {
		line, long, err := readLine(r, 5)
		if len(line) > 0 || long {
			got = append(got, res{string(line), long})
		}
		if err != nil {
			break
		}
	}
	want := []res{{"12345", false}, {"", true}, {"1234", false}, {"", true}, {"abc", false}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestStdioUsage: the command line of stdio.
func TestStdioUsage(t *testing.T) {
	for _, args := range [][]string{
		{"stdio"},
		{"stdio", "http://127.0.0.1:1/mcp", "extra"},
		{"stdio", "127.0.0.1:1/mcp"},
		{"stdio", "http://127.0.0.1:1/mcp", "--json"},
		{"stdio", "http://127.0.0.1:1/mcp", "--answer", "accept"},
		{"stdio", "https://example.com/mcp", "--oauth", "--token", "x"},
		{"stdio", "http://example.com/mcp", "--token", "x"},
	} {
		if code, out, _ := mcpfn(t, "", args...); code != 2 || out != "" {
			t.Errorf("%q: exit %d, stdout %q", args, code, out)
		}
	}
}

// TestStdioOAuth: --oauth logs in once (browser flow, loopback redirect;
// the URL on stderr, never stdout), and the token serves both eras: a
// relayed 2026-07-28 request and the 2025 session of a later initialize.
func TestStdioOAuth(t *testing.T) {
	endpoint, _ := protected(t)
	browsed := browserURLs(t)

	h := startHost(t, endpoint, "--oauth")
	resp, _ := h.call(1, "tools/call", `{"name":"echo",`+modernMetaJSON+`}}`, nil)
	if got := text(t, resp); got != "secret" {
		t.Fatalf("relayed call: %q", got)
	}
	resp, _ = h.call(2, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}`, nil)
	if resp["result"] == nil {
		t.Fatalf("initialize: %v", resp)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp, _ = h.call(3, "tools/call", `{"name":"echo"}`, nil)
	if got := text(t, resp); got != "secret" {
		t.Fatalf("call in the session: %q", got)
	}
	if code := h.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if opened := browsed(); len(opened) != 1 || !strings.Contains(h.stderrText(), opened[0]) {
		t.Fatalf("authorizations %q; stderr:\n%s", opened, h.stderrText())
	}
}
