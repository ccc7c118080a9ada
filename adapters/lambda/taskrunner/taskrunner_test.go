package taskrunner_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/mcpfn/mcpfn/adapters/lambda/taskrunner"
)

// invokeServer answers the Lambda Invoke API with the statuses it is given,
// one per request (202 when none is left), and records each request. The
// cross-module tests (test/lambdafront) run the function behind a complete
// Invoke API; this one checks the runner's side of the wire.
type invokeServer struct {
	t *testing.T

	mu       sync.Mutex
	statuses []int
	requests []*http.Request
	bodies   []string
}

func (s *invokeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.bodies = append(s.bodies, string(b))
	status := http.StatusAccepted
	if len(s.statuses) > 0 {
		status, s.statuses = s.statuses[0], s.statuses[1:]
	}
	s.mu.Unlock()
	if status != http.StatusAccepted {
		typ := map[int]string{403: "AccessDeniedException", 429: "TooManyRequestsException", 500: "ServiceException"}[status]
		w.Header().Set("X-Amzn-ErrorType", typ)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, `{"Type":"User","message":"injected"}`)
		return
	}
	w.WriteHeader(status)
}

func newRunner(t *testing.T, opts *taskrunner.Options, statuses ...int) (*taskrunner.Runner, *invokeServer) {
	t.Helper()
	s := &invokeServer{t: t, statuses: statuses}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	client := awslambda.New(awslambda.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(hs.URL),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "test-secret"}, nil
		}),
	})
	if opts == nil {
		opts = &taskrunner.Options{}
	}
	r, err := taskrunner.New(client, "mcp-fn", opts)
	if err != nil {
		t.Fatal(err)
	}
	return r, s
}

// TestStartWire: Start sends one asynchronous, signed Invoke of the
// function, whose payload names the task and nothing else.
func TestStartWire(t *testing.T) {
	t.Parallel()
	r, s := newRunner(t, &taskrunner.Options{Qualifier: "live"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the creating request has ended: the start is detached from it
	if err := r.Start(ctx, "task-1"); err != nil {
		t.Fatal(err)
	}
	if len(s.requests) != 1 {
		t.Fatalf("%d requests, want 1", len(s.requests))
	}
	req := s.requests[0]
	if req.Method != http.MethodPost || req.URL.Path != "/2015-03-31/functions/mcp-fn/invocations" || req.URL.Query().Get("Qualifier") != "live" {
		t.Errorf("request %s %s", req.Method, req.URL)
	}
	if got := req.Header.Get("X-Amz-Invocation-Type"); got != "Event" {
		t.Errorf("X-Amz-Invocation-Type %q, want Event", got)
	}
	if !strings.HasPrefix(req.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
		t.Errorf("unsigned request: %q", req.Header.Get("Authorization"))
	}
	if s.bodies[0] != `{"mcpfnTask":{"taskId":"task-1"}}` {
		t.Errorf("payload %s", s.bodies[0])
	}
}

// TestStartRetries: throttling and server errors are retried by the SDK's
// standard retryer; a refusal (access denied) and exhausted retries are
// errors, for the caller to fail the task with.
func TestStartRetries(t *testing.T) {
	t.Parallel()
	r, s := newRunner(t, nil, 429, 500)
	if err := r.Start(context.Background(), "task-2"); err != nil {
		t.Fatalf("after a throttle and a server error: %v", err)
	}
	if len(s.requests) != 3 {
		t.Errorf("%d requests, want 3", len(s.requests))
	}

	r, s = newRunner(t, nil, 403)
	err := r.Start(context.Background(), "task-3-0123456789")
	if err == nil || !strings.Contains(err.Error(), "AccessDeniedException") || !strings.Contains(err.Error(), "task-3-0") ||
		strings.Contains(err.Error(), "task-3-0123456789") {
		t.Errorf("access denied: %v", err)
	}
	if len(s.requests) != 1 {
		t.Errorf("access denied: %d requests, want 1 (not retried)", len(s.requests))
	}

	r, s = newRunner(t, nil, 500, 500, 500, 500)
	if err := r.Start(context.Background(), "task-4"); err == nil {
		t.Error("server errors past the retries: no error")
	}
	if len(s.requests) != 3 {
		t.Errorf("server errors: %d requests, want 3", len(s.requests))
	}
}

// TestStartTimeout: a Lambda endpoint that does not answer costs at most
// Options.Timeout.
func TestStartTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); hs.Close() })
	client := awslambda.New(awslambda.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(hs.URL), RetryMaxAttempts: 1,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "test-secret"}, nil
		}),
	})
	r, err := taskrunner.New(client, "mcp-fn", &taskrunner.Options{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = r.Start(context.Background(), "task-5")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("unanswered Invoke: %v, want a deadline error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("unanswered Invoke took %v", d)
	}
}

// TestStartRefuses: ids the adapter would refuse are not sent.
func TestStartRefuses(t *testing.T) {
	t.Parallel()
	r, s := newRunner(t, nil)
	for _, id := range []string{"", "a b", strings.Repeat("x", 129), "é"} {
		if err := r.Start(context.Background(), id); err == nil {
			t.Errorf("task id %q: no error", id)
		}
	}
	if len(s.requests) != 0 {
		t.Errorf("%d requests, want none", len(s.requests))
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	if _, err := taskrunner.New(nil, "fn", nil); err == nil {
		t.Error("nil client: no error")
	}
	if _, err := taskrunner.New(awslambda.New(awslambda.Options{}), "", nil); err == nil {
		t.Error("no function name: no error")
	}
}
