package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/lambdalocal"
	"github.com/mcpfn/mcpfn/test/internal/proc"
	"github.com/mcpfn/mcpfn/test/lambdafront/internal/echo"
)

// The emulator buffers streamed responses, so it cannot show whether events
// leave the function as they are flushed. runtimeAPI speaks the Lambda
// Runtime API (https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html)
// the way Lambda does to a function with response streaming: it hands out
// one event, then reads the response body as it arrives, chunk by chunk.
//
// The function's /sse handler flushes its first event, then fetches
// /release from runtimeAPI, which answers only once the first event has
// arrived: the rest of the response cannot be written before.

const requestID = "8476a536-e9f4-11e8-9739-2dfe598c3fcd"

// runtimeAPI is a one-invocation Lambda Runtime API.
type runtimeAPI struct {
	t       *testing.T
	event   []byte
	handout sync.Once
	closing chan struct{}

	firstEvent chan struct{} // closed when the first SSE event has arrived
	result     chan wireResult
	released   chan bool // what /release saw: whether the first event had arrived
}

// wireResult is what arrived at the response endpoint.
type wireResult struct {
	contentType, transferEncoding, responseMode string
	prelude                                     []byte
	body                                        []byte
	bodyAtFirstEvent                            []byte // the body when the first event was complete
	trailer                                     http.Header
	readErr                                     error
	errorPost                                   string // body of a POST .../error
}

func newRuntimeAPI(t *testing.T, event []byte) *runtimeAPI {
	return &runtimeAPI{
		t: t, event: event,
		closing:    make(chan struct{}),
		firstEvent: make(chan struct{}),
		result:     make(chan wireResult, 1),
		released:   make(chan bool, 1),
	}
}

func (a *runtimeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	const prefix = "/2018-06-01/runtime/"
	switch {
	case r.Method == "GET" && r.URL.Path == prefix+"invocation/next":
		handed := false
		a.handout.Do(func() {
			handed = true
			h := w.Header()
			h.Set("Lambda-Runtime-Aws-Request-Id", requestID)
			h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(30*time.Second).UnixMilli(), 10))
			h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:echofn")
			h.Set("Lambda-Runtime-Trace-Id", "Root=1-5bef4de7-ad49b0e87f6ef6c87fc2e700;Parent=9a9197af755a6419;Sampled=1")
			h.Set("Content-Type", "application/json")
			w.Write(a.event)
		})
		if !handed { // Lambda freezes the function until the next event
			select {
			case <-r.Context().Done():
			case <-a.closing:
			}
			w.WriteHeader(http.StatusServiceUnavailable)
		}

	case r.Method == "POST" && r.URL.Path == prefix+"invocation/"+requestID+"/response":
		res := wireResult{
			contentType:      r.Header.Get("Content-Type"),
			transferEncoding: strings.Join(r.TransferEncoding, ","),
			responseMode:     r.Header.Get("Lambda-Runtime-Function-Response-Mode"),
		}
		a.readResponse(r.Body, &res)
		res.trailer = r.Trailer
		w.WriteHeader(http.StatusAccepted)
		a.result <- res

	case r.Method == "POST" && r.URL.Path == prefix+"invocation/"+requestID+"/error":
		b, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
		a.result <- wireResult{errorPost: string(b)}

	case r.Method == "POST" && r.URL.Path == prefix+"init/error":
		b, _ := io.ReadAll(r.Body)
		a.t.Errorf("init error: %s", b)
		w.WriteHeader(http.StatusAccepted)

	case r.Method == "GET" && r.URL.Path == "/release":
		select {
		case <-a.firstEvent:
			a.released <- true
		case <-time.After(10 * time.Second):
			a.released <- false
		}

	default:
		a.t.Errorf("unexpected runtime API call %s %s", r.Method, r.URL)
		w.WriteHeader(http.StatusNotFound)
	}
}

// readResponse reads a streamed response as it arrives: the prelude up to
// the 8 NUL bytes, then the body, noting when the first SSE event is
// complete.
func (a *runtimeAPI) readResponse(body io.Reader, res *wireResult) {
	var all []byte
	buf := make([]byte, 32<<10)
	first := false
	for {
		n, err := body.Read(buf)
		all = append(all, buf[:n]...)
		if res.prelude == nil {
			if i := bytes.Index(all, make([]byte, 8)); i >= 0 {
				res.prelude = append([]byte{}, all[:i]...)
				all = all[i+8:]
			}
		}
		if res.prelude != nil && !first && bytes.Contains(all, []byte("\n\n")) {
			first = true
			res.bodyAtFirstEvent = append([]byte{}, all...)
			close(a.firstEvent)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			res.readErr = err
			break
		}
	}
	if res.prelude == nil {
		res.prelude = all // not a streamed response
	} else {
		res.body = all
	}
}

// runFunction runs the echo function against api, which serves on url.
func runFunction(t *testing.T, url string, env ...string) {
	t.Helper()
	cmd := exec.Command(binary(t, "echofn"))
	cmd.Env = append(os.Environ(), append(env, "AWS_LAMBDA_RUNTIME_API="+strings.TrimPrefix(url, "http://"))...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	proc.StopAtEnd(t, cmd, "function output", &out)
}

// TestStreamingWire checks, on the Runtime API wire, that a streamed
// response leaves the function as it is flushed: the prelude and the first
// event arrive while the handler is still running.
func TestStreamingWire(t *testing.T) {
	for _, door := range []Door{DoorFunctionURL, DoorAPIGatewayV1} {
		for _, panics := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/panic=%v", door, panics), func(t *testing.T) {
				t.Parallel()
				testStreamingWire(t, door, panics)
			})
		}
	}
}

func testStreamingWire(t *testing.T, door Door, panics bool) {
	target := "/sse"
	if panics {
		target += "?panic=1"
	}
	fd := &lambdalocal.Door{Integration: door}
	event, err := fd.Event(httptest.NewRequest("GET", target, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	api := newRuntimeAPI(t, event)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(api.closing) }) // runs before srv.Close
	runFunction(t, srv.URL, "ECHOFN_STREAMING=1", "ECHOFN_RELEASE_URL="+srv.URL+"/release")

	var res wireResult
	select {
	case res = <-api.result:
	case <-time.After(30 * time.Second):
		t.Fatal("no response from the function")
	}
	if res.errorPost != "" {
		t.Fatalf("the function reported an error: %s", res.errorPost)
	}
	if res.contentType != lambdalocal.StreamingContentType {
		t.Errorf("Content-Type = %q, want %q", res.contentType, lambdalocal.StreamingContentType)
	}
	if res.transferEncoding != "chunked" {
		t.Errorf("Transfer-Encoding = %q, want chunked", res.transferEncoding)
	}
	// aws-lambda-go (v1.55.1) streams without this header; Lambda relies on
	// the content type and the chunked encoding.
	if res.responseMode != "" && res.responseMode != "streaming" {
		t.Errorf("Lambda-Runtime-Function-Response-Mode = %q", res.responseMode)
	}

	var p struct {
		StatusCode        int                 `json:"statusCode"`
		Headers           map[string]string   `json:"headers"`
		MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
	}
	if err := json.Unmarshal(res.prelude, &p); err != nil {
		t.Fatalf("prelude %q: %v", res.prelude, err)
	}
	ct := p.Headers["Content-Type"]
	if door == DoorAPIGatewayV1 {
		ct = strings.Join(p.MultiValueHeaders["Content-Type"], ",")
	}
	if p.StatusCode != 200 || ct != "text/event-stream" {
		t.Errorf("prelude = %s", res.prelude)
	}

	firstEvent, _, _ := strings.Cut(echo.SSEBody, "\n\n")
	firstEvent += "\n\n"
	if string(res.bodyAtFirstEvent) != firstEvent {
		t.Errorf("body when the first event arrived = %q, want only %q", res.bodyAtFirstEvent, firstEvent)
	}
	if panics {
		// The stream ends with an error, sent as trailers.
		if string(res.body) != firstEvent {
			t.Errorf("body = %q, want %q", res.body, firstEvent)
		}
		errType := res.trailer.Get("Lambda-Runtime-Function-Error-Type")
		errBody, _ := base64.StdEncoding.DecodeString(res.trailer.Get("Lambda-Runtime-Function-Error-Body"))
		if errType == "" || !bytes.Contains(errBody, []byte("handler failed")) {
			t.Errorf("error trailers: type %q, body %q", errType, errBody)
		}
		return
	}
	select {
	case ok := <-api.released:
		if !ok {
			t.Fatal("the handler asked to be released, but the first event did not arrive while it waited")
		}
	default:
		t.Fatal("the handler did not wait for the first event")
	}
	if string(res.body) != echo.SSEBody {
		t.Errorf("body = %q, want %q", res.body, echo.SSEBody)
	}
	if v := res.trailer.Get("Lambda-Runtime-Function-Error-Type"); v != "" || res.readErr != nil {
		t.Errorf("error: trailer %q, read %v", v, res.readErr)
	}
}
