package lambdalocal_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/lambdalocal"
)

// newFunction runs this test binary as the bootstrap.
func newFunction(t *testing.T, cfg lambdalocal.Config) (*lambdalocal.Function, *mcptest.LogBuffer) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := &mcptest.LogBuffer{}
	cfg.Bootstrap = exe
	cfg.Env = append(cfg.Env, "LAMBDALOCAL_TEST_BOOTSTRAP=1")
	cfg.Output = out
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	fn, err := lambdalocal.NewFunction(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		fn.Close()
		if t.Failed() {
			t.Logf("function output:\n%s", out.String())
		}
	})
	return fn, out
}

// serve puts fn behind a Door on a test server.
func serve(t *testing.T, fn lambdalocal.Invoker, mode lambdalocal.InvokeMode) string {
	t.Helper()
	srv := httptest.NewServer(&lambdalocal.Door{Function: fn, Mode: mode, Timeout: 10 * time.Second})
	t.Cleanup(srv.Close)
	return srv.URL
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("GET %s: reading the body: %v", url, err)
	}
	return res.StatusCode, string(b)
}

// TestStreamFlushByFlush checks that the first chunk of a streamed response
// reaches the client while the function is still running: the function
// sends "second" only once the client has read "first".
func TestStreamFlushByFlush(t *testing.T) {
	t.Parallel()
	fn, _ := newFunction(t, lambdalocal.Config{})
	firstRead := make(chan struct{})
	released := make(chan bool, 1)
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		select {
		case <-firstRead:
			released <- true
		case <-time.After(10 * time.Second):
			released <- false
		}
	}))
	defer gate.Close()
	base := serve(t, fn, lambdalocal.Streaming)

	res, err := http.Get(base + "/stream?gate=" + gate.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET /stream: %s, Content-Type %q", res.Status, res.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(res.Body)
	if line, err := br.ReadString('\n'); line != "first\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	close(firstRead)
	if rest, err := io.ReadAll(br); string(rest) != "second\n" || err != nil {
		t.Errorf("rest %q, %v; want second", rest, err)
	}
	if !<-released {
		t.Error("the first chunk reached the client only after the function finished")
	}
}

// TestBufferedAndErrors covers a buffered answer, a function error, a
// process that exits, a timeout, and the streamed answer of a function
// behind a buffered door: each failure is the AWS status, and the next
// request is served by a new process.
func TestBufferedAndErrors(t *testing.T) {
	t.Parallel()
	fn, out := newFunction(t, lambdalocal.Config{Name: "calc", Timeout: time.Second})
	base := serve(t, fn, lambdalocal.Buffered)
	_, pid := get(t, base+"/pid")
	for _, c := range []struct {
		path   string
		status int
		body   string
	}{
		{"/echo", 200, "echo "},
		{"/error", 502, `{"message":"Internal Server Error"}` + "\n"},
		{"/stream", 502, `{"message":"Internal Server Error"}` + "\n"},
		{"/exit", 502, `{"message":"Internal Server Error"}` + "\n"},
		{"/echo", 200, "echo "},
		{"/sleep?ms=5000", 504, `{"message":"Endpoint request timed out"}` + "\n"},
		{"/echo", 200, "echo "},
	} {
		if status, body := get(t, base+c.path); status != c.status || body != c.body {
			t.Errorf("GET %s: %d %q, want %d %q", c.path, status, body, c.status, c.body)
		}
	}
	if _, now := get(t, base+"/pid"); now == pid {
		t.Errorf("the process that exited and the one that timed out were not replaced: pid %s", now)
	}
	if !strings.Contains(out.String(), "[fn] bootstrap up; function calc\n") {
		t.Errorf("the function's output lacks its prefixed start line:\n%s", out.String())
	}
}

// TestConcurrencyShareOneProcess checks that with Concurrency above 1 one
// process runs several invocations at once (the first /rendezvous waits
// for the second), and that they share its memory.
func TestConcurrencyShareOneProcess(t *testing.T) {
	t.Parallel()
	fn, _ := newFunction(t, lambdalocal.Config{Concurrency: 4, Timeout: 10 * time.Second})
	base := serve(t, fn, lambdalocal.Auto)
	var wg sync.WaitGroup
	pids := make([]string, 2)
	for i := range pids {
		wg.Go(func() {
			status, body := get(t, base+"/rendezvous")
			if status != 200 {
				t.Errorf("rendezvous %d: %d %s", i, status, body)
			}
			pids[i] = body
		})
	}
	wg.Wait()
	if pids[0] != pids[1] {
		t.Errorf("the invocations ran in processes %v, want one", pids)
	}
	for want := range []string{"1", "2", "3"} {
		if _, n := get(t, base+"/count"); n != string(rune('1'+want)) {
			t.Errorf("count %d: %s", want+1, n)
		}
	}
}

// TestSandboxes checks that with Sandboxes 2 and Concurrency 1 an
// invocation arriving while the first sandbox is busy runs in a second
// process, and that the first (warm) one serves again once free.
func TestSandboxes(t *testing.T) {
	t.Parallel()
	fn, _ := newFunction(t, lambdalocal.Config{Sandboxes: 2, Timeout: 10 * time.Second})
	base := serve(t, fn, lambdalocal.Auto)
	_, first := get(t, base+"/pid")

	// Hold the first sandbox: its streamed response waits for the gate.
	open := make(chan struct{})
	gate := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-open }))
	defer gate.Close()
	res, err := http.Get(base + "/stream?gate=" + gate.URL)
	if err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(res.Body).ReadString('\n'); line != "first\n" {
		t.Fatalf("stream: %q %v", line, err)
	}
	_, second := get(t, base+"/pid")
	close(open)
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if second == first {
		t.Errorf("an invocation while the first sandbox was busy ran in its process %s", first)
	}
	if _, again := get(t, base+"/pid"); again != first {
		t.Errorf("the next invocation ran in process %s, want the first sandbox's %s", again, first)
	}
}

// TestWarm checks that Warm waits for the function's init, and reports
// an init failure with the function's payload.
func TestWarm(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	fn, out := newFunction(t, lambdalocal.Config{})
	if err := fn.Warm(ctx); err != nil {
		t.Fatalf("Warm: %v", err)
	}
	// The function printed "bootstrap up" before it asked for its first
	// invocation, which Warm waits for; the line reaches out through a
	// pipe, so it may arrive just after Warm returns. That Warm waits for
	// the init itself is the failing function's case below: its error can
	// only come from the init.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if !out.WaitFor(wctx, "bootstrap up") {
		t.Errorf("the function did not start:\n%s", out.String())
	}

	bad, _ := newFunction(t, lambdalocal.Config{Env: []string{"LAMBDALOCAL_TEST_INIT=fail"}})
	err := bad.Warm(ctx)
	if err == nil || !strings.Contains(err.Error(), `"errorMessage":"no config"`) {
		t.Errorf("Warm of a function failing at init: %v", err)
	}
	fn.Close()
	if err := fn.Warm(ctx); !errors.Is(err, lambdalocal.ErrClosed) {
		t.Errorf("Warm after Close: %v, want ErrClosed", err)
	}
	if _, err := fn.Invoke(ctx, []byte(`{}`)); !errors.Is(err, lambdalocal.ErrClosed) {
		t.Errorf("Invoke after Close: %v, want ErrClosed", err)
	}
}

// TestNewFunctionErrors checks the bootstrap's validation.
func TestNewFunctionErrors(t *testing.T) {
	for _, b := range []string{"", t.TempDir(), "/no/such/bootstrap"} {
		if _, err := lambdalocal.NewFunction(lambdalocal.Config{Bootstrap: b}); err == nil {
			t.Errorf("NewFunction(Bootstrap %q) succeeded", b)
		}
	}
}

// TestInvokeAPI checks the Invoke API: a synchronous invocation answers the
// payload, an asynchronous one 202 and runs afterwards, another function's
// name 404, an unsigned request 403.
func TestInvokeAPI(t *testing.T) {
	t.Parallel()
	ran := make(chan string, 1)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ran <- r.URL.Query().Get("n")
	}))
	defer hook.Close()
	fn, _ := newFunction(t, lambdalocal.Config{Name: "counter", Env: []string{"LAMBDALOCAL_TEST_HOOK=" + hook.URL}})
	api := lambdalocal.NewInvokeAPI("counter", fn, nil)
	srv := httptest.NewServer(api)
	defer srv.Close()
	defer api.Close()
	body := `{"count":true}`
	invoke := func(name, typ string, signed bool) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/2015-03-31/functions/"+name+"/invocations", strings.NewReader(body))
		if typ != "" {
			req.Header.Set("X-Amz-Invocation-Type", typ)
		}
		if signed {
			req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/lambda/aws4_request, SignedHeaders=host, Signature=00")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if status, body := invoke("counter", "", true); status != 200 || body != `{"count":1}` {
		t.Errorf("RequestResponse: %d %s", status, body)
	}
	<-ran
	if status, _ := invoke("arn:aws:lambda:us-east-1:123456789012:function:counter", "Event", true); status != 202 {
		t.Errorf("Event: %d", status)
	}
	if n := <-ran; n != "2" {
		t.Errorf("the asynchronous invocation counted %s, want 2", n)
	}
	if status, _ := invoke("other", "", true); status != 404 {
		t.Errorf("another function: %d, want 404", status)
	}
	if status, _ := invoke("counter", "", false); status != 403 {
		t.Errorf("unsigned: %d, want 403", status)
	}
	// An asynchronous invocation's payload may be up to 1 MB (Lambda's
	// quota), past the former 256 KB.
	body = `{"count":true,"pad":"` + strings.Repeat("x", 300<<10) + `"}`
	if status, resp := invoke("counter", "Event", true); status != 202 {
		t.Errorf("Event of 300 KB: %d %s", status, resp)
	} else if n := <-ran; n != "3" {
		t.Errorf("the 300 KB invocation counted %s, want 3", n)
	}
	body = `{"pad":"` + strings.Repeat("x", 1<<20) + `"}`
	if status, resp := invoke("counter", "Event", true); status != http.StatusRequestEntityTooLarge || !strings.Contains(resp, "RequestTooLargeException") {
		t.Errorf("Event over 1 MB: %d %s", status, resp)
	}
}

// TestSecretsManager checks the two read operations and the errors.
func TestSecretsManager(t *testing.T) {
	t.Parallel()
	value := lambdalocal.NewKeySecret()
	srv := httptest.NewServer(lambdalocal.NewSecretsManager(map[string]string{"app/keys": value}))
	defer srv.Close()
	call := func(op, body string) (int, map[string]any) {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-amz-json-1.1")
		req.Header.Set("X-Amz-Target", "secretsmanager."+op)
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/secretsmanager/aws4_request, SignedHeaders=host, Signature=00")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		if err := decodeJSON(res.Body, &out); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		return res.StatusCode, out
	}
	status, d := call("DescribeSecret", `{"SecretId":"app/keys"}`)
	stages, _ := d["VersionIdsToStages"].(map[string]any)
	if status != 200 || d["Name"] != "app/keys" || len(stages) != 1 {
		t.Fatalf("DescribeSecret: %d %v", status, d)
	}
	var version string
	for v := range stages {
		version = v
	}
	status, g := call("GetSecretValue", `{"SecretId":"`+lambdalocal.SecretARN("app/keys")+`","VersionId":"`+version+`"}`)
	if status != 200 || g["SecretString"] != value || g["VersionId"] != version {
		t.Errorf("GetSecretValue: %d %v", status, g)
	}
	if !strings.HasPrefix(value, `{"key":"`) || len(value) != len(`{"key":""}`)+44 {
		t.Errorf("NewKeySecret = %s, want {\"key\":\"<base64 of 32 bytes>\"}", value)
	}
	for _, c := range []struct{ op, body, typ string }{
		{"GetSecretValue", `{"SecretId":"other"}`, "ResourceNotFoundException"},
		{"GetSecretValue", `{"SecretId":"app/keys","VersionStage":"AWSPENDING"}`, "ResourceNotFoundException"},
		{"PutSecretValue", `{"SecretId":"app/keys"}`, "UnknownOperationException"},
	} {
		if status, e := call(c.op, c.body); status != 400 || e["__type"] != c.typ {
			t.Errorf("%s %s: %d %v, want 400 %s", c.op, c.body, status, e, c.typ)
		}
	}
}

func decodeJSON(r io.Reader, v any) error {
	return json.NewDecoder(r).Decode(v)
}

// TestConcurrencyClientGone checks that with several invocations per
// process a client that goes away mid-stream leaves the function running
// (its response discarded), the process and its memory with it, and the
// slot free once the function has finished.
func TestConcurrencyClientGone(t *testing.T) {
	t.Parallel()
	fn, _ := newFunction(t, lambdalocal.Config{Concurrency: 2, Timeout: 10 * time.Second})
	base := serve(t, fn, lambdalocal.Auto)
	_, pid := get(t, base+"/pid")

	open := make(chan struct{})
	finished := make(chan struct{})
	gate := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		<-open
		close(finished) // the function goes on with "second" now
	}))
	defer gate.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/stream?gate="+gate.URL, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(res.Body).ReadString('\n'); line != "first\n" {
		t.Fatalf("stream: %q %v", line, err)
	}
	cancel() // the client goes away
	res.Body.Close()
	close(open)
	<-finished
	// Both slots serve again, in the same process: with one of them still
	// held, the second of two concurrent /rendezvous could not run.
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if status, body := get(t, base+"/rendezvous"); status != 200 || body != pid {
				t.Errorf("rendezvous after the client left: %d %q, want 200 and the same process %s", status, body, pid)
			}
		})
	}
	wg.Wait()
}
