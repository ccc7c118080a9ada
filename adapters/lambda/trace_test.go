package lambda_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/adapters/lambda"
)

// TestTraceHeaderChild is the function of TestTraceHeader, run in a child
// process of the test binary under a Runtime API: a handler that answers
// with the request's X-Amzn-Trace-Id header.
func TestTraceHeaderChild(t *testing.T) {
	if os.Getenv("LAMBDA_TRACE_TEST_CHILD") != "1" {
		t.Skip("run by TestTraceHeader")
	}
	lambda.Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Join(r.Header.Values("X-Amzn-Trace-Id"), ","))
	}), nil)
}

// traceEvent is a Function URL event whose front sent an X-Amzn-Trace-Id
// header of its own.
const traceEvent = `{"version":"2.0","rawPath":"/","headers":{"x-amzn-trace-id":"Root=1-5759e988-bd862e3fe1be46a994272793;Parent=1111111111111111;Sampled=1"},` +
	`"requestContext":{"domainName":"abc.lambda-url.us-east-1.on.aws","http":{"method":"GET","path":"/","protocol":"HTTP/1.1","sourceIp":"192.0.2.1"}}}`

// TestTraceHeader: under the real aws-lambda-go runtime client (the
// function in a child process, a Runtime API on loopback handing out one
// invocation with a Lambda-Runtime-Trace-Id), the request the handler
// gets carries the invocation's trace header as X-Amzn-Trace-Id, in place
// of the event's; without a runtime trace id (Wrap called directly) the
// event's header is kept.
func TestTraceHeader(t *testing.T) {
	t.Parallel()
	const runtimeTrace = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	body := make(chan string, 1)
	stop := make(chan struct{})
	served := false
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/2018-06-01/runtime/invocation/next":
			if served { // one invocation: the next waits for the end of the test
				<-stop
				w.WriteHeader(http.StatusGone)
				return
			}
			served = true
			w.Header().Set("Lambda-Runtime-Aws-Request-Id", "req-1")
			w.Header().Set("Lambda-Runtime-Deadline-Ms", "9999999999999")
			w.Header().Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:fn")
			w.Header().Set("Lambda-Runtime-Trace-Id", runtimeTrace)
			io.WriteString(w, traceEvent)
		case r.Method == http.MethodPost && r.URL.Path == "/2018-06-01/runtime/invocation/req-1/response":
			var res struct{ Body string }
			raw, _ := io.ReadAll(r.Body)
			if err := json.Unmarshal(raw, &res); err != nil {
				t.Errorf("response %s: %v", raw, err)
			}
			body <- res.Body
			w.WriteHeader(http.StatusAccepted)
		default:
			unexpectedRuntimeCall(t, w, r)
		}
	}))
	t.Cleanup(func() { close(stop); api.Close() })

	out := startRuntimeChild(t, "TestTraceHeaderChild", api.URL, "LAMBDA_TRACE_TEST_CHILD=1")
	select {
	case got := <-body:
		if got != runtimeTrace {
			t.Errorf("the handler saw X-Amzn-Trace-Id %q, want the invocation's %q", got, runtimeTrace)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no response from the function; its output:\n%s", out.String())
	}

	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Join(r.Header.Values("X-Amzn-Trace-Id"), ","))
	})
	res, _ := lambda.Wrap(h, nil)(context.Background(), json.RawMessage(traceEvent))
	raw, _ := json.Marshal(res)
	var direct struct{ Body string }
	json.Unmarshal(raw, &direct)
	if want := "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=1111111111111111;Sampled=1"; direct.Body != want {
		t.Errorf("without a runtime trace id the handler saw %q, want the event's %q", direct.Body, want)
	}
}
