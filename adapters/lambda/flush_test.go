package lambda_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// recordingFlusher records its flushes, with the deadline of each, and
// what the handler had done by then.
type recordingFlusher struct {
	err   error
	state func() string // what the flush sees, when set

	mu        sync.Mutex
	seen      []string
	deadlines []time.Time
}

func (f *recordingFlusher) ForceFlush(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := "flushed"
	if f.state != nil {
		s = f.state()
	}
	f.seen = append(f.seen, s)
	dl, _ := ctx.Deadline()
	f.deadlines = append(f.deadlines, dl)
	return f.err
}

func (f *recordingFlusher) flushes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

// TestFlushBuffered: with Options.Flush, a buffered answer is the reader
// of the JSON the answer would be without it; nothing is flushed until it
// is closed, once, within FlushTimeout of the close and the invocation's
// deadline.
func TestFlushBuffered(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<b>a & b</b>")
	})
	plain, err := lambda.Wrap(h, nil)(context.Background(), json.RawMessage(functionURLEvent))
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	enc.Encode(plain)

	f := &recordingFlusher{}
	other := &recordingFlusher{}
	fn := lambda.Wrap(h, &lambda.Options{Flush: []lambda.Flusher{f, nil, other}, FlushTimeout: time.Hour})
	deadline := time.Now().Add(time.Minute)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	v, err := fn(ctx, json.RawMessage(functionURLEvent))
	if err != nil {
		t.Fatal(err)
	}
	rc, ok := v.(io.ReadCloser)
	if !ok {
		t.Fatalf("answer %T, want an io.ReadCloser", v)
	}
	if ct := v.(interface{ ContentType() string }).ContentType(); ct != "application/json" {
		t.Errorf("content type %q, want application/json", ct)
	}
	if _, err := json.Marshal(v); err == nil {
		t.Error("the answer marshals to JSON: aws-lambda-go would send that instead of reading it")
	}
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != strings.TrimSuffix(want.String(), "\n") {
		t.Errorf("answer\n%s\nwant the JSON of the plain answer\n%s", got, want.String())
	}
	if n := len(f.flushes()); n != 0 {
		t.Fatalf("%d flushes before Close", n)
	}
	rc.Close()
	rc.Close()
	if n, m := len(f.flushes()), len(other.flushes()); n != 1 || m != 1 {
		t.Fatalf("flushes after two Closes: %d and %d, want 1 each", n, m)
	}
	if dl := f.deadlines[0]; !dl.Equal(deadline) {
		t.Errorf("flush deadline %v, want the invocation's %v (FlushTimeout is an hour)", dl, deadline)
	}

	// Without a deadline, FlushTimeout bounds the flush.
	f2 := &recordingFlusher{}
	v, _ = lambda.Wrap(h, &lambda.Options{Flush: []lambda.Flusher{f2}, FlushTimeout: time.Second})(context.Background(), json.RawMessage(functionURLEvent))
	before := time.Now()
	v.(io.Closer).Close()
	if dl := f2.deadlines[0]; dl.Before(before.Add(time.Second)) || dl.After(time.Now().Add(time.Second)) {
		t.Errorf("flush deadline %v, want a second after the close (%v)", dl, before)
	}
}

// TestFlushStreaming: a streamed answer flushes when it is closed, after
// the handler has returned.
func TestFlushStreaming(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	returned := false
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, " second")
		mu.Lock()
		returned = true
		mu.Unlock()
	})
	f := &recordingFlusher{state: func() string {
		mu.Lock()
		defer mu.Unlock()
		return fmt.Sprint("handler returned: ", returned)
	}}
	v, err := lambda.Wrap(h, &lambda.Options{Streaming: true, Flush: []lambda.Flusher{f}})(context.Background(), json.RawMessage(functionURLEvent))
	if err != nil {
		t.Fatal(err)
	}
	if ct := v.(interface{ ContentType() string }).ContentType(); ct != "application/vnd.awslambda.http-integration-response" {
		t.Errorf("content type %q, want the streaming one", ct)
	}
	close(release)
	res := readResponse(t, v) // reads to the end, then closes
	if res.Body != "first second" {
		t.Errorf("body %q", res.Body)
	}
	if got := f.flushes(); len(got) != 1 || got[0] != "handler returned: true" {
		t.Errorf("flushes %q, want one after the handler returned", got)
	}
}

// TestFlushError: an invocation that ends with an error flushes before
// returning it, since nothing is closed after an error; a failed flush is
// logged, once a minute at most.
func TestFlushError(t *testing.T) {
	t.Parallel()
	th := newTaskHandler()
	th.err = errors.New("store unreachable")
	f := &recordingFlusher{err: errors.New("collector down")}
	var logs mcptest.LogBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	fn := lambda.Wrap(th, &lambda.Options{Flush: []lambda.Flusher{f}, Logger: log})
	ev, _ := lambda.TaskEvent("task-1")
	for range 2 {
		if _, err := fn(context.Background(), ev); err == nil || !strings.Contains(err.Error(), "store unreachable") {
			t.Fatalf("error %v, want the task's", err)
		}
	}
	if n := len(f.flushes()); n != 2 {
		t.Errorf("%d flushes for two failed invocations, want 2", n)
	}
	if n := strings.Count(logs.String(), "collector down"); n != 1 {
		t.Errorf("the flush failure is logged %d times, want once:\n%s", n, logs.String())
	}
}

// TestFlushRuntimeChild is the function of TestFlushRuntime, run in a
// child process of the test binary under a Runtime API: it answers with
// whether the invocation is the process's cold start, and its Flusher
// reports each flush to the Runtime API's server.
func TestFlushRuntimeChild(t *testing.T) {
	if os.Getenv("LAMBDA_FLUSH_TEST_CHILD") == "" {
		t.Skip("run by TestFlushRuntime")
	}
	hook := os.Getenv("LAMBDA_FLUSH_TEST_HOOK")
	f := flusherFunc(func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hook, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		return res.Body.Close()
	})
	lambda.Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cold, ok := lambda.ColdStart(r.Context())
		fmt.Fprintf(w, "cold=%v ok=%v", cold, ok)
	}), &lambda.Options{Streaming: os.Getenv("LAMBDA_FLUSH_TEST_CHILD") == "streaming", Flush: []lambda.Flusher{f}})
}

type flusherFunc func(context.Context) error

func (f flusherFunc) ForceFlush(ctx context.Context) error { return f(ctx) }

// TestFlushRuntime: under the real aws-lambda-go runtime client (the
// function in a child process, a Runtime API on loopback handing out two
// invocations), buffered and streamed, each flush comes after the
// invocation's response has been received whole and before the function
// asks for the next invocation, which is when Lambda freezes the sandbox;
// and only the first invocation is a cold start.
func TestFlushRuntime(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"buffered", "streaming"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var events []string
			record := func(e string) {
				mu.Lock()
				events = append(events, e)
				mu.Unlock()
			}
			stop := make(chan struct{})
			third := make(chan struct{})
			n := 0
			api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == "/flushed":
					record("flush")
				case r.Method == http.MethodGet && r.URL.Path == "/2018-06-01/runtime/invocation/next":
					record("next")
					mu.Lock()
					n++
					k := n
					mu.Unlock()
					if k > 2 {
						close(third)
						<-stop
						w.WriteHeader(http.StatusGone)
						return
					}
					w.Header().Set("Lambda-Runtime-Aws-Request-Id", fmt.Sprint("req-", k))
					w.Header().Set("Lambda-Runtime-Deadline-Ms", fmt.Sprint(time.Now().Add(time.Minute).UnixMilli()))
					w.Header().Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:fn")
					io.WriteString(w, functionURLEvent)
				case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/response"):
					raw, _ := io.ReadAll(r.Body)
					if mode == "streaming" {
						_, raw, _ = bytes.Cut(raw, make([]byte, 8))
					} else {
						var res struct{ Body string }
						if err := json.Unmarshal(raw, &res); err != nil {
							t.Errorf("buffered response %s: %v", raw, err)
						}
						raw = []byte(res.Body)
					}
					record("response " + string(raw))
					w.WriteHeader(http.StatusAccepted)
				default:
					unexpectedRuntimeCall(t, w, r)
				}
			}))
			t.Cleanup(func() { close(stop); api.Close() })

			out := startRuntimeChild(t, "TestFlushRuntimeChild", api.URL,
				"LAMBDA_FLUSH_TEST_CHILD="+mode, "LAMBDA_FLUSH_TEST_HOOK="+api.URL+"/flushed")
			select {
			case <-third:
			case <-time.After(30 * time.Second):
				t.Fatalf("the function did not ask for a third invocation; its output:\n%s", out.String())
			}
			mu.Lock()
			defer mu.Unlock()
			want := []string{"next", "response cold=true ok=true", "flush", "next", "response cold=false ok=true", "flush", "next"}
			if strings.Join(events, "|") != strings.Join(want, "|") {
				t.Errorf("runtime API saw\n%q\nwant\n%q", events, want)
			}
		})
	}
}
