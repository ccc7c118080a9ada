package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/lambdalocal"
	"github.com/mcpfn/mcpfn/test/lambdafront/internal/echo"
)

// These tests cover the streaming backend (-runtime stream) and the front
// door's pass-through of streamed responses. The central check: the first
// server-sent event of /sse reaches the HTTP client while the handler is
// still running. The handler flushes its first event, then fetches a release
// URL that answers only once the client has read that event (or after
// releaseWait, saying it had not): a front door that buffered would make
// the handler wait in vain.

const releaseWait = 5 * time.Second

// releaser is the release URL of echo's /sse handler.
type releaser struct {
	*httptest.Server
	firstEvent chan struct{} // closed by the client when it has read the first event
	released   chan bool     // whether the first event had arrived when the handler asked
}

func newReleaser(t *testing.T) *releaser {
	r := &releaser{firstEvent: make(chan struct{}), released: make(chan bool, 1)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		select {
		case <-r.firstEvent:
			r.released <- true
		case <-time.After(releaseWait):
			r.released <- false
		}
	}))
	t.Cleanup(r.Close)
	return r
}

// checkFirstEventEarly GETs /sse through the door at base, and checks that
// the first event arrived before the handler finished.
func checkFirstEventEarly(t *testing.T, base string, rel *releaser) {
	t.Helper()
	res, err := http.Get(base + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET /sse: %s, Content-Type %q", res.Status, res.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(res.Body)
	var got strings.Builder
	for !strings.HasSuffix(got.String(), "\n\n") {
		line, err := br.ReadString('\n')
		got.WriteString(line)
		if err != nil {
			t.Fatalf("reading the first event: %v (got %q)", err, got.String())
		}
	}
	close(rel.firstEvent)
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}
	if body := got.String() + string(rest); body != echo.SSEBody {
		t.Errorf("body = %q, want %q", body, echo.SSEBody)
	}
	select {
	case ok := <-rel.released:
		if !ok {
			t.Errorf("the first event reached the client only after the handler finished")
		}
	case <-time.After(releaseWait + 5*time.Second):
		t.Error("the handler never asked to be released")
	}
}

// wrapStreamer runs adapters/lambda in process and hands over its response
// as aws-lambda-go's runtime loop would send it: a streaming response as the
// reader it is, with its content type; a buffered one as JSON.
type wrapStreamer struct {
	fn func(context.Context, json.RawMessage) (any, error)
}

func (w wrapStreamer) Invoke(ctx context.Context, event []byte) (*lambdalocal.Response, error) {
	res, err := w.fn(ctx, event)
	if err != nil {
		return nil, err
	}
	if r, ok := res.(interface {
		io.ReadCloser
		ContentType() string
	}); ok {
		return &lambdalocal.Response{ContentType: r.ContentType(), Body: r}, nil
	}
	b, err := json.Marshal(res)
	return &lambdalocal.Response{ContentType: "application/json", Body: io.NopCloser(strings.NewReader(string(b)))}, err
}

// TestPassThroughInProcess checks the front door's pass-through against
// adapters/lambda in process, without a Runtime API.
func TestPassThroughInProcess(t *testing.T) {
	t.Parallel()
	for _, door := range []Door{DoorFunctionURL, DoorAPIGatewayV1} {
		t.Run(string(door), func(t *testing.T) {
			t.Parallel()
			rel := newReleaser(t)
			base := serveDoor(t, door, ModeStreaming,
				wrapStreamer{lambda.Wrap(echo.Handler(rel.URL), &lambda.Options{Streaming: true})})
			checkFirstEventEarly(t, base, rel)
		})
	}
	t.Run("round trips", func(t *testing.T) {
		t.Parallel()
		for _, door := range doors {
			for _, streaming := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/streaming=%v", door, streaming), func(t *testing.T) {
					base := serveDoor(t, door, expectedMode(door, streaming),
						wrapStreamer{lambda.Wrap(echo.Handler(""), &lambda.Options{Streaming: streaming})})
					roundTrips(t, base, door)
				})
			}
		}
	})
}

// TestRuntimeStreaming checks, with a real bootstrap on the streaming
// backend, that the first event reaches the client before the handler
// finishes, for both streaming integrations.
func TestRuntimeStreaming(t *testing.T) {
	t.Parallel()
	for _, door := range []Door{DoorFunctionURL, DoorAPIGatewayV1} {
		t.Run(string(door), func(t *testing.T) {
			t.Parallel()
			rel := newReleaser(t)
			s := startDoor(t, config{
				Door: door, Mode: ModeStreaming, Runtime: RuntimeStream, Bootstrap: binary(t, "echofn"),
				Concurrency: 1, Env: functionEnv(true, rel.URL),
			})
			checkFirstEventEarly(t, s.URL(), rel)
		})
	}
}

// TestRuntimeRoundTrips runs the round trips through the streaming backend,
// for every door, buffered and streaming.
func TestRuntimeRoundTrips(t *testing.T) {
	t.Parallel()
	for _, door := range doors {
		for _, streaming := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/streaming=%v", door, streaming), func(t *testing.T) {
				t.Parallel()
				s := startDoor(t, config{
					Door: door, Mode: expectedMode(door, streaming), Runtime: RuntimeStream,
					Bootstrap: binary(t, "echofn"), Concurrency: 2, Env: functionEnv(streaming, ""),
				})
				roundTrips(t, s.URL(), door)
			})
		}
	}
}

// TestRuntimeTruncated checks that a streamed response that fails after it
// started (error trailers) reaches the client cut short.
func TestRuntimeTruncated(t *testing.T) {
	t.Parallel()
	s := startDoor(t, config{
		Door: DoorFunctionURL, Mode: ModeStreaming, Runtime: RuntimeStream,
		Bootstrap: binary(t, "echofn"), Concurrency: 1, Env: functionEnv(true, ""),
	})
	res, err := http.Get(s.URL() + "/sse?panic=1")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	firstEvent, _, _ := strings.Cut(echo.SSEBody, "\n\n")
	if res.StatusCode != 200 || string(body) != firstEvent+"\n\n" || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("GET /sse?panic=1: %s, body %q, read error %v; want 200, the first event, then unexpected EOF", res.Status, body, err)
	}
	if res, body := do(t, "GET", s.URL()+"/echo", nil, nil); res.StatusCode != 200 {
		t.Errorf("next request: %s %s", res.Status, body)
	}
}

// TestRuntimeModeMismatch checks that the door refuses an answer in the
// other invoke mode, as the AWS integrations do.
func TestRuntimeModeMismatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mode      Mode
		streaming bool
	}{{ModeBuffered, true}, {ModeStreaming, false}} {
		t.Run(string(c.mode), func(t *testing.T) {
			t.Parallel()
			s := startDoor(t, config{
				Door: DoorFunctionURL, Mode: c.mode, Runtime: RuntimeStream,
				Bootstrap: binary(t, "echofn"), Concurrency: 1, Env: functionEnv(c.streaming, ""),
			})
			if res, body := do(t, "GET", s.URL()+"/sse", nil, nil); res.StatusCode != http.StatusBadGateway {
				t.Errorf("function streaming=%v behind a %s door: %s %q, want 502", c.streaming, c.mode, res.Status, body)
			}
		})
	}
}

// TestRuntimeRecovery checks that concurrent requests run in parallel, and
// that a sandbox whose invocation timed out, whose process exited, or whose
// client went away serves the next request with a new process.
func TestRuntimeRecovery(t *testing.T) {
	t.Parallel()
	t.Run("concurrency", func(t *testing.T) {
		t.Parallel()
		s := startDoor(t, config{
			Door: DoorFunctionURL, Runtime: RuntimeStream, Bootstrap: binary(t, "echofn"),
			Concurrency: 3, Env: functionEnv(true, ""),
		})
		do(t, "GET", s.URL()+"/echo", nil, nil) // start one process before timing
		start := time.Now()
		var wg sync.WaitGroup
		for i := range 6 {
			wg.Go(func() {
				if res, body := do(t, "GET", s.URL()+fmt.Sprintf("/sleep?ms=500&i=%d", i), nil, nil); res.StatusCode != 200 {
					t.Errorf("sleep %d: %s %s", i, res.Status, body)
				}
			})
		}
		wg.Wait()
		// 6 × 500 ms on 3 sandboxes: about 1 s; one at a time would take 3 s.
		if d := time.Since(start); d > 2500*time.Millisecond {
			t.Errorf("6 concurrent 500 ms requests on 3 sandboxes took %v", d)
		}
	})
	t.Run("timeout and exit", func(t *testing.T) {
		t.Parallel()
		s := startDoor(t, config{
			Door: DoorFunctionURL, Runtime: RuntimeStream, Bootstrap: binary(t, "echofn"),
			Concurrency: 1, Timeout: 2 * time.Second, Env: functionEnv(true, ""),
		})
		for _, c := range []struct {
			path   string
			status int
		}{{"/sleep?ms=5000", http.StatusGatewayTimeout}, {"/exit", http.StatusBadGateway}} {
			if res, body := do(t, "GET", s.URL()+c.path, nil, nil); res.StatusCode != c.status {
				t.Errorf("GET %s: %s %s, want %d", c.path, res.Status, body, c.status)
			}
			if res, body := do(t, "GET", s.URL()+"/echo", nil, nil); res.StatusCode != 200 {
				t.Errorf("after GET %s: %s %s", c.path, res.Status, body)
			}
		}
	})
	t.Run("client gone", func(t *testing.T) {
		t.Parallel()
		s := startDoor(t, config{
			Door: DoorFunctionURL, Runtime: RuntimeStream, Bootstrap: binary(t, "echofn"),
			Concurrency: 1, Timeout: 20 * time.Second, Env: functionEnv(true, ""),
		})
		client := &http.Client{Timeout: 300 * time.Millisecond}
		if res, err := client.Get(s.URL() + "/sleep?ms=15000"); err == nil {
			res.Body.Close()
			t.Fatalf("GET /sleep?ms=15000 answered %s within 300ms", res.Status)
		}
		start := time.Now()
		if res, body := do(t, "GET", s.URL()+"/echo", nil, nil); res.StatusCode != 200 {
			t.Errorf("after the client left: %s %s", res.Status, body)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("the next request waited %v: the abandoned invocation held the only sandbox", d)
		}
	})
}

// TestForeignHost checks that the door, like AWS, answers only requests
// addressed to it: another Host name never reaches the function.
func TestForeignHost(t *testing.T) {
	t.Parallel()
	invoked := false
	base := serveDoor(t, DoorFunctionURL, ModeAuto,
		wrapStreamer{lambda.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { invoked = true }), nil)})
	_, port, _ := strings.Cut(strings.TrimPrefix(base, "http://"), ":")
	for host, want := range map[string]int{
		"evil.example.com":         http.StatusForbidden,
		"evil.example.com:" + port: http.StatusForbidden,
		"localhost:" + port:        http.StatusOK,
		"127.0.0.1:" + port:        http.StatusOK,
	} {
		invoked = false
		req, _ := http.NewRequest("GET", base+"/", nil)
		req.Host = host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want || invoked != (want == http.StatusOK) {
			t.Errorf("Host %s: %s, function invoked %v; want %d", host, res.Status, invoked, want)
		}
	}
}
