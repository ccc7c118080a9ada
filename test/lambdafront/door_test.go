package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/internal/testenv"
	"github.com/mcpfn/mcpfn/lambdalocal"
	"github.com/mcpfn/mcpfn/test/internal/proc"
	"github.com/mcpfn/mcpfn/test/internal/repo"
	"github.com/mcpfn/mcpfn/test/internal/rie"
	"github.com/mcpfn/mcpfn/test/lambdafront/internal/echo"
)

// lambdaBuilds are the bootstraps' builds of this test binary, which
// TestMain removes.
var lambdaBuilds []*repo.Binaries

// lambdaBinaries builds pkgs (relative to the repository's root) as a
// Lambda bootstrap is built (CGO_ENABLED=0, -tags lambda.norpc), once per
// test binary, when a test first asks for them.
func lambdaBinaries(pkgs ...string) *repo.Binaries {
	b := &repo.Binaries{Pattern: "lambdafront-test-", Packages: pkgs,
		Flags: []string{"-tags", "lambda.norpc"}, Env: []string{"CGO_ENABLED=0"}}
	lambdaBuilds = append(lambdaBuilds, b)
	return b
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, b := range lambdaBuilds {
		b.Remove()
	}
	os.Exit(code)
}

// echoBins are the echo bootstrap and lambdafront itself.
var echoBins = lambdaBinaries("./test/lambdafront/internal/echofn", "./test/lambdafront")

// binary returns the path of echofn or lambdafront.
func binary(t *testing.T, name string) string {
	t.Helper()
	return echoBins.Path(t, name)
}

// requireRIE returns the emulator's path, or skips the test.
func requireRIE(t *testing.T) string {
	t.Helper()
	testenv.RIE.SkipShort(t)
	return rie.Path(t)
}

// rigBootstrap returns the bootstrap name of bins and, for RuntimeRIE, the
// emulator's path. It skips the test with -short, or when runtime needs
// the emulator and it is missing; what names the bootstrap in the reason.
func rigBootstrap(t *testing.T, what string, bins *repo.Binaries, name string, runtime Runtime) (bootstrap, rie string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds and runs the " + what + " bootstrap")
	}
	if runtime == RuntimeRIE {
		rie = requireRIE(t)
	}
	return bins.Path(t, name), rie
}

// wrapInvoker invokes adapters/lambda in process, and answers what the
// emulator would: the streamed bytes, or the JSON of a buffered response,
// without saying which.
type wrapInvoker struct {
	fn func(context.Context, json.RawMessage) (any, error)
}

func (w wrapInvoker) Invoke(ctx context.Context, event []byte) (*lambdalocal.Response, error) {
	res, err := w.fn(ctx, event)
	if err != nil {
		return nil, err
	}
	var b []byte
	if r, ok := res.(io.ReadCloser); ok {
		defer r.Close()
		b, err = io.ReadAll(r)
	} else {
		b, err = json.Marshal(res)
	}
	if err != nil {
		return nil, err
	}
	return &lambdalocal.Response{Body: io.NopCloser(bytes.NewReader(b))}, nil
}

var doors = []Door{DoorFunctionURL, DoorAPIGatewayV1, DoorAPIGatewayV2}

// TestDoorInProcess runs the round trips through the front door against
// adapters/lambda in process: no emulator needed.
func TestDoorInProcess(t *testing.T) {
	t.Parallel()
	for _, door := range doors {
		for _, streaming := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/streaming=%v", door, streaming), func(t *testing.T) {
				t.Parallel()
				base := serveDoor(t, door, expectedMode(door, streaming),
					wrapInvoker{lambda.Wrap(echo.Handler(""), &lambda.Options{Streaming: streaming})})
				roundTrips(t, base, door)
			})
		}
	}
}

// expectedMode is the invoke mode the door must see: strict, so that the
// tests prove which path the response took.
func expectedMode(door Door, streaming bool) Mode {
	if streaming && door != DoorAPIGatewayV2 { // HTTP APIs fall back to buffered
		return ModeStreaming
	}
	return ModeBuffered
}

// TestEmulator runs the round trips through the front door and the real
// emulator, for every door, buffered and streaming.
func TestEmulator(t *testing.T) {
	rie := requireRIE(t)
	bootstrap := binary(t, "echofn")
	for _, door := range doors {
		for _, streaming := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/streaming=%v", door, streaming), func(t *testing.T) {
				s := startDoor(t, config{
					Door: door, Mode: expectedMode(door, streaming), Bootstrap: bootstrap, RIE: rie,
					Concurrency: 2, Env: functionEnv(streaming, ""),
				})
				roundTrips(t, s.URL(), door)
			})
		}
	}
}

// TestEmulatorConcurrency checks that concurrent requests run in parallel on
// the pool, and that a timed-out invocation leaves the pool usable.
func TestEmulatorConcurrency(t *testing.T) {
	// Not parallel: it measures the pool's concurrency in real time, so it
	// runs before the parallel tests start.
	rie := requireRIE(t)
	s := startDoor(t, config{
		Door: DoorFunctionURL, Bootstrap: binary(t, "echofn"), RIE: rie,
		Concurrency: 3, Timeout: 2 * time.Second, Env: functionEnv(true, ""),
	})
	start := time.Now()
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			res, body := do(t, "GET", s.URL()+fmt.Sprintf("/sleep?ms=500&i=%d", i), nil, nil)
			if res.StatusCode != 200 {
				t.Errorf("sleep %d: %s %s", i, res.Status, body)
			}
		})
	}
	wg.Wait()
	// 6 × 500 ms on 3 emulators: about 1 s; one at a time would take 3 s.
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Errorf("6 concurrent 500 ms requests on 3 emulators took %v", d)
	}

	res, body := do(t, "GET", s.URL()+"/sleep?ms=5000", nil, nil)
	if res.StatusCode != http.StatusGatewayTimeout {
		t.Errorf("timed-out invocation: %s %s, want 504", res.Status, body)
	}
	for i := range 4 { // every emulator still works
		res, body := do(t, "GET", s.URL()+"/echo", nil, nil)
		if res.StatusCode != 200 {
			t.Errorf("after the timeout, request %d: %s %s", i, res.Status, body)
		}
	}
}

// TestCommand runs the lambdafront binary with each backend, and stops it
// with SIGINT: no process it started may survive it.
func TestCommand(t *testing.T) {
	t.Run("rie", func(t *testing.T) {
		// 2 emulators, and at least 1 function (the second function starts
		// on its first invocation).
		testCommand(t, 3, "-rie", requireRIE(t))
	})
	t.Run("stream", func(t *testing.T) {
		testCommand(t, 1, "-runtime", "stream") // the function that served /sse
	})
}

func testCommand(t *testing.T, minProcs int, args ...string) {
	bins := map[string]string{"echofn": binary(t, "echofn"), "lambdafront": binary(t, "lambdafront")}
	cmd := exec.Command(bins["lambdafront"], append([]string{"-addr", "127.0.0.1:0", "-door", "apigw-v1",
		"-bootstrap", bins["echofn"], "-concurrency", "2", "-timeout", "10s"}, args...)...)
	cmd.Env = functionEnv(true, "")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })

	urlc := make(chan string, 1)
	var log bytes.Buffer
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		buf := make([]byte, 4096)
		for {
			n, err := stderr.Read(buf)
			log.Write(buf[:n])
			if i := strings.Index(log.String(), "url=http://"); i >= 0 && len(urlc) == 0 {
				if u, _, ok := strings.Cut(log.String()[i+4:], " "); ok {
					urlc <- u
				}
			}
			if err != nil {
				return
			}
		}
	}()
	var base string
	select {
	case base = <-urlc:
	case <-time.After(15 * time.Second):
		t.Fatalf("lambdafront did not start:\n%s", log.String())
	}
	res, body := do(t, "GET", base+"/sse", nil, nil)
	if res.StatusCode != 200 || string(body) != echo.SSEBody {
		t.Errorf("GET /sse: %s %q", res.Status, body)
	}

	pids := proc.Children(cmd.Process.Pid) // the emulators or functions
	for _, pid := range pids {
		pids = append(pids, proc.Children(pid)...) // and the emulators' functions
	}
	if len(pids) < minProcs {
		t.Errorf("lambdafront runs processes %v, want at least %d", pids, minProcs)
	}
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { <-logDone; done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("lambdafront exited with %v:\n%s", err, log.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("lambdafront did not exit on SIGINT:\n%s", log.String())
	}
	for _, pid := range pids {
		if running(pid) {
			t.Errorf("process %d still running after lambdafront exited", pid)
		}
	}
}

// running reports whether pid is a live (not zombie) process.
func running(pid int) bool {
	state, ok := procState(pid)
	return ok && !strings.HasPrefix(state, "Z") && !strings.HasPrefix(state, "X")
}

// procState returns /proc/pid/stat from its state field on, and whether
// the process was found.
func procState(pid int) (string, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", false
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return after, true
}

func functionEnv(streaming bool, releaseURL string) []string {
	env := os.Environ()
	if streaming {
		env = append(env, "ECHOFN_STREAMING=1")
	}
	if releaseURL != "" {
		env = append(env, "ECHOFN_RELEASE_URL="+releaseURL)
	}
	return env
}

// startDoor starts an in-process front door, on a free port unless
// cfg.Addr names one, and shuts it down when the test ends. The emulators'
// and functions' output goes to cfg.Log, a new mcptest.LogBuffer when nil, and is
// logged if the test failed.
func startDoor(t *testing.T, cfg config) *server {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	cfg.Logger = testLogger(t)
	if cfg.Log == nil {
		cfg.Log = &mcptest.LogBuffer{}
	}
	s, err := start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		if out, ok := cfg.Log.(fmt.Stringer); ok && t.Failed() {
			t.Logf("function output:\n%s", out)
		}
	})
	return s
}

// serveDoor serves a lambdalocal.Door in front of fn on loopback until the
// test ends, and returns its URL.
func serveDoor(t *testing.T, door Door, mode Mode, fn lambdalocal.Invoker) string {
	t.Helper()
	srv := httptest.NewServer(&lambdalocal.Door{
		Integration: door, Mode: mode, Timeout: 10 * time.Second, Function: fn, Logger: testLogger(t),
	})
	t.Cleanup(srv.Close)
	return srv.URL
}

// toolCall is a 2026-07-28 tools/call request for tool, with args (a JSON
// object) as its arguments.
func toolCall(tool, args string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `,` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
}

// toolCallHeader is the HTTP header of a toolCall for tool, with tok as
// its bearer token when set.
func toolCallHeader(tool, tok string) http.Header {
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {tool}}
	if tok != "" {
		h.Set("Authorization", "Bearer "+tok)
	}
	return h
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

func do(t *testing.T, method, url string, body []byte, h http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	client := &http.Client{Timeout: 30 * time.Second}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

// roundTrips checks the requests and responses that pass through a front
// door to the echo function and back.
func roundTrips(t *testing.T, base string, door Door) {
	t.Helper()
	multi := door == DoorAPIGatewayV1 // REST APIs keep repeated headers apart

	t.Run("echo", func(t *testing.T) {
		reqBody := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		res, body := do(t, "POST", base+"/echo?status=201&a=1&a=2&sp=x%20y", reqBody, http.Header{
			"Content-Type": {"application/json"},
			"X-Multi":      {"one", "two"},
			"Cookie":       {"x=1; y=2"},
		})
		if res.StatusCode != 201 {
			t.Fatalf("status %s: %s", res.Status, body)
		}
		if got := res.Header.Values("Set-Cookie"); !reflect.DeepEqual(got, echo.Cookies) {
			t.Errorf("Set-Cookie = %q, want %q", got, echo.Cookies)
		}
		wantMulti := []string{"a,b"}
		if multi {
			wantMulti = []string{"a", "b"}
		}
		if got := res.Header.Values("X-Multi"); !reflect.DeepEqual(got, wantMulti) {
			t.Errorf("X-Multi = %q, want %q", got, wantMulti)
		}
		if ct := res.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q", ct)
		}
		var e echo.Echo
		if err := json.Unmarshal(body, &e); err != nil {
			t.Fatalf("echo body %q: %v", body, err)
		}
		wantQuery := "status=201&a=1&a=2&sp=x%20y"
		wantEvent := map[Door]string{
			DoorFunctionURL:  "*events.LambdaFunctionURLRequest",
			DoorAPIGatewayV2: "*events.APIGatewayV2HTTPRequest",
			DoorAPIGatewayV1: "*events.APIGatewayProxyRequest",
		}[door]
		wantHeader := []string{"one,two"}
		if multi {
			wantQuery = "a=1&a=2&sp=x+y&status=201" // decoded by API Gateway, encoded again
			wantHeader = []string{"one", "two"}
		}
		got, _ := base64.StdEncoding.DecodeString(e.Body)
		for _, c := range []struct{ what, got, want string }{
			{"method", e.Method, "POST"},
			{"path", e.Path, "/echo"},
			{"query", e.RawQuery, wantQuery},
			{"host", e.Host, strings.TrimPrefix(base, "http://")},
			{"remote address", e.RemoteAddr, "127.0.0.1:0"},
			{"event type", e.EventType, wantEvent},
			{"body", string(got), string(reqBody)},
			{"cookies", strings.Join(e.Cookies, "; "), "x=1; y=2"},
		} {
			if c.got != c.want {
				t.Errorf("function saw %s %q, want %q", c.what, c.got, c.want)
			}
		}
		if !reflect.DeepEqual(e.Header["X-Multi"], wantHeader) {
			t.Errorf("function saw X-Multi %q, want %q", e.Header["X-Multi"], wantHeader)
		}
		if !e.Deadline {
			t.Error("the request context has no deadline")
		}
	})

	t.Run("binary", func(t *testing.T) {
		payload := make([]byte, 4096)
		rand.Read(payload)
		res, body := do(t, "POST", base+"/binary", payload, http.Header{"Content-Type": {"application/octet-stream"}})
		if res.StatusCode != 200 || !bytes.Equal(body, payload) {
			t.Errorf("POST /binary: %s, %d bytes back, equal=%v", res.Status, len(body), bytes.Equal(body, payload))
		}
		if ct := res.Header.Get("Content-Type"); ct != "application/octet-stream" {
			t.Errorf("Content-Type = %q", ct)
		}
		res, body = do(t, "GET", base+"/binary", nil, nil)
		if res.StatusCode != 200 || len(body) != 256 || body[0] != 0 || body[255] != 255 {
			t.Errorf("GET /binary: %s %x", res.Status, body)
		}
	})

	t.Run("sse", func(t *testing.T) {
		res, body := do(t, "GET", base+"/sse", nil, http.Header{"Accept": {"text/event-stream"}})
		if res.StatusCode != 200 || string(body) != echo.SSEBody {
			t.Errorf("GET /sse: %s %q", res.Status, body)
		}
		if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Errorf("Content-Type = %q", ct)
		}
	})

	t.Run("errors", func(t *testing.T) {
		res, body := do(t, "GET", base+"/panic", nil, nil)
		if res.StatusCode != 500 || string(body) != "Internal Server Error\n" {
			t.Errorf("GET /panic: %s %q", res.Status, body)
		}
		res, body = do(t, "GET", base+"/nowhere", nil, nil)
		if res.StatusCode != 404 {
			t.Errorf("GET /nowhere: %s %q", res.Status, body)
		}
		res, body = do(t, "HEAD", base+"/echo", nil, nil)
		if res.StatusCode != 200 || len(body) != 0 {
			t.Errorf("HEAD /echo: %s %q", res.Status, body)
		}
	})
}
