package workers_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpfn/mcpfn/test/workers/workerdtest"
)

// testKey is the MCPFN_STATE_KEY of the Workers the tests run.
const testKey = "c2VjcmV0LWtleS1vZi10aGUtd29ya2Vycy10ZXN0cy0wMQ=="

// crossContext are workerd's reports of a promise or I/O object used from
// another request's context, and of a request whose code hung.
var crossContext = []string{"different request context", "had hung", "on behalf of a different request"}

func startServer(t *testing.T, bindings map[string]string) *workerdtest.Worker {
	t.Helper()
	dir := workerdtest.Package(t, "./test/workers/testserver")
	if bindings == nil {
		bindings = map[string]string{}
	}
	bindings["MCPFN_LOCAL_ADDR"] = "127.0.0.1:8787"
	return workerdtest.Start(t, dir, bindings)
}

// post sends a 2026-07-28 tools/call of tool with args, and returns the
// response (the caller closes its body).
func post(t *testing.T, w *workerdtest.Worker, tool string, args any, header http.Header) *http.Response {
	t.Helper()
	a, _ := json.Marshal(args)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"p"}}}`, tool, a)
	return postRaw(t, w, []byte(body), tool, header)
}

func postRaw(t *testing.T, w *workerdtest.Worker, body []byte, tool string, header http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", w.URL+"/mcp", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// result reads a tools/call response (JSON or SSE) to its end and returns
// the structuredContent of its result, or fails the test.
func result(t *testing.T, resp *http.Response) json.RawMessage {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimPrefix(line, "data: ")
		var m struct {
			ID     *int `json:"id"`
			Result struct {
				Structured json.RawMessage `json:"structuredContent"`
			} `json:"result"`
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.ID != nil {
			if m.Error != nil {
				t.Fatalf("error: %s", m.Error)
			}
			return m.Result.Structured
		}
	}
	t.Fatalf("no response in %q", b)
	return nil
}

type stats struct {
	Instance  string `json:"instance"`
	Cancelled int64  `json:"cancelled"`
	HeapInuse uint64 `json:"heapInuse"`
	Sys       uint64 `json:"sys"`
}

func getStats(t *testing.T, w *workerdtest.Worker) stats {
	t.Helper()
	var s stats
	if err := json.Unmarshal(result(t, post(t, w, "stats", map[string]any{}, nil)), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// streams runs n streaming calls on one isolate, each started when the
// one before has streamed its first event, so that the calls overlap and
// end at different times, and returns how many got their result.
func streams(t *testing.T, w *workerdtest.Worker, n int) int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for i := range n {
		to := i%5*4 + 2
		resp := post(t, w, "count", map[string]int{"to": to}, nil)
		br := bufio.NewReader(resp.Body)
		_, first := br.ReadString('\n') // the first event has begun: start the next call
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer resp.Body.Close()
			if first != nil {
				return
			}
			b, _ := io.ReadAll(br)
			if strings.Contains(string(b), fmt.Sprintf(`"structuredContent":"counted to %d"`, to)) {
				mu.Lock()
				ok++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return ok
}

func TestConcurrentStreams(t *testing.T) {
	w := startServer(t, nil)
	for round := range 3 {
		if got := streams(t, w, 32); got != 32 {
			t.Fatalf("round %d: %d of 32 streaming calls completed", round, got)
		}
	}
	for _, s := range crossContext {
		if strings.Contains(w.Logs(), s) {
			t.Errorf("workerd reported %q", s)
		}
	}
}

// TestConcurrentStreamsUnsafe turns the mechanism off (the glue then acts
// on what Go posts at once, in whatever request's context Go runs, and
// never ticks): the same calls must then fail, or the test above proves
// nothing.
func TestConcurrentStreamsUnsafe(t *testing.T) {
	w := startServer(t, map[string]string{"MCPFN_GLUE_UNSAFE_DIRECT": "1"})
	failed := false
	for round := 0; round < 5 && !failed; round++ {
		failed = streams(t, w, 32) < 32
	}
	if !failed {
		t.Fatal("every call completed without the request-context mechanism")
	}
}

func TestCancelOnDisconnect(t *testing.T) {
	w := startServer(t, nil)
	before := getStats(t, w).Cancelled
	resp := post(t, w, "wait", map[string]any{}, nil)
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close() // the client goes away
	for i := 0; ; i++ {
		if getStats(t, w).Cancelled == before+1 {
			break
		}
		if i == 20000 {
			t.Fatal("the handler's context was not cancelled when the client went away")
		}
	}
}

func TestHandlerPanic(t *testing.T) {
	w := startServer(t, nil)
	id := getStats(t, w).Instance
	resp := post(t, w, "stats", map[string]any{}, http.Header{"X-Test": {"panic"}})
	resp.Body.Close()
	if resp.StatusCode != 500 {
		t.Fatalf("a panicking handler: status %d, want 500", resp.StatusCode)
	}
	if got := getStats(t, w).Instance; got != id {
		t.Fatalf("a recovered panic replaced the instance (%s → %s)", id, got)
	}
}

func TestExitStartsFreshInstance(t *testing.T) {
	for _, how := range []string{"exit", "crash"} {
		t.Run(how, func(t *testing.T) {
			w := startServer(t, nil)
			id := getStats(t, w).Instance
			var resp *http.Response
			if how == "exit" {
				resp = post(t, w, "stats", map[string]any{}, http.Header{"X-Test": {"exit"}})
			} else {
				resp = post(t, w, "crash", map[string]any{}, nil)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 500 && !(resp.StatusCode == 200 && !strings.Contains(string(b), `"result"`)) {
				t.Fatalf("the request that ended the instance: status %d %q, want 500 or a cut stream", resp.StatusCode, b)
			}
			if got := getStats(t, w).Instance; got == id || got == "" {
				t.Fatalf("after the Go instance ended, the next request got instance %q (was %q)", got, id)
			}
		})
	}
}

func TestBadRequests(t *testing.T) {
	w := startServer(t, nil)
	big := bytes.Repeat([]byte(" "), 5<<20)
	resp := postRaw(t, w, big, "stats", nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 5 MiB body: status %d, want 413", resp.StatusCode)
	}
	resp = postRaw(t, w, []byte(`{"jsonrpc":"2.0","id":1,`), "stats", nil)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "-32700") {
		t.Errorf("malformed JSON: status %d %s, want 400 with -32700", resp.StatusCode, b)
	}
	resp, err := http.Get(w.URL + "/elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("another path: status %d, want 404", resp.StatusCode)
	}
	getStats(t, w) // and the next request is served
}

// TestMemoryBounded serves 20,000 requests on one isolate and checks that
// the Go heap stays far under the 128 MB a Workers isolate has.
func TestMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	w := startServer(t, nil)
	const n, workers = 20000, 8
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += workers {
				tool, args := "stats", any(map[string]any{})
				if i%10 == 0 {
					tool, args = "count", map[string]int{"to": 1}
				}
				resp := post(t, w, tool, args, nil)
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("request %d: status %d", i, resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	s := getStats(t, w)
	t.Logf("after %d requests: Go heap in use %.1f MiB, Go runtime memory %.1f MiB", n, float64(s.HeapInuse)/(1<<20), float64(s.Sys)/(1<<20))
	if s.Sys > 48<<20 {
		t.Errorf("Go runtime holds %d bytes after %d requests, want at most 48 MiB (an isolate has 128 MB)", s.Sys, n)
	}
}

// TestTransport calls a loopback server from a tool through
// workers.Transport: the body arrives, a body past the bound is an error,
// and a redirect is not followed.
func TestTransport(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write(bytes.Repeat([]byte("x"), 4096)) })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/small", http.StatusFound) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	w := startServer(t, nil)
	for path, want := range map[string]string{"/small": `"200 hello"`, "/big": "over 1024 bytes", "/moved": `"302 `} {
		got := string(result(t, post(t, w, "fetch", map[string]string{"url": srv.URL + path}, nil)))
		if !strings.Contains(got, want) {
			t.Errorf("GET %s: %s, want %s", path, got, want)
		}
	}
}

// TestEagerStart starts Go while the isolate starts (MCPFN_EAGER_START=1):
// examples/workers starts there, and the test server, whose initialiser
// reads crypto/rand (refused at global scope), starts in its first request
// instead, with the reason in the log. Both then serve.
func TestEagerStart(t *testing.T) {
	eager := map[string]string{"MCPFN_EAGER_START": "1", "MCPFN_LOCAL_ADDR": "127.0.0.1:8787", "MCPFN_STATE_KEY": testKey}
	ex := workerdtest.Start(t, workerdtest.Package(t, "./examples/workers"), eager)
	got := string(result(t, post(t, ex, "add", map[string]int{"left": 2, "right": 40}, nil)))
	if got != "42" {
		t.Errorf("examples/workers, eager: add = %s", got)
	}
	if strings.Contains(ex.Logs(), "eager start failed") {
		t.Errorf("examples/workers did not start eagerly:\n%s", ex.Logs())
	}
	ts := startServer(t, map[string]string{"MCPFN_EAGER_START": "1"})
	getStats(t, ts)
	if !strings.Contains(ts.Logs(), "random bytes read at global scope") {
		t.Errorf("the test server read crypto/rand at start, yet the log does not say why it did not start eagerly:\n%s", ts.Logs())
	}
}
