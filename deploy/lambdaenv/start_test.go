package lambdaenv_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/deploy/lambdaenv"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// TestStartChild is the Lambda function of TestStart, run in a child
// process of the test binary: it is the user's whole main.
func TestStartChild(t *testing.T) {
	if os.Getenv("LAMBDAENV_TEST_CHILD") != "1" {
		t.Skip("run by TestStart")
	}
	lambdaenv.Start(core.Implementation{Name: "calc", Version: "1.0.0"}, func(s *core.Server) {
		core.AddTool(s, &core.Tool{Name: "add", Description: "Add two numbers."},
			func(ctx context.Context, req *core.CallToolRequest, in struct{ A, B int }) (int, error) {
				return in.A + in.B, nil
			})
		if os.Getenv("LAMBDAENV_TEST_TASKS") == "1" {
			core.AddTool(s, &core.Tool{Name: "job", Description: "Runs as a task."},
				func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) { return "done", nil },
				&core.ToolOptions{TaskSupport: core.TaskRequired})
		}
	})
}

// runtimeAPI is a loopback Lambda Runtime API
// (https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html) that
// hands out one invocation and records its response.
type runtimeAPI struct {
	*httptest.Server
	event    []byte
	response chan invocationResponse
	stop     chan struct{}
}

type invocationResponse struct {
	header http.Header
	body   []byte
}

func newRuntimeAPI(t *testing.T, event []byte) *runtimeAPI {
	api := &runtimeAPI{event: event, response: make(chan invocationResponse, 1), stop: make(chan struct{})}
	served := false
	api.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/2018-06-01/runtime/invocation/next":
			if served { // one invocation: the next waits for the end of the test
				<-api.stop
				w.WriteHeader(http.StatusGone)
				return
			}
			served = true
			w.Header().Set("Lambda-Runtime-Aws-Request-Id", "req-1")
			w.Header().Set("Lambda-Runtime-Deadline-Ms", "9999999999999")
			w.Header().Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:calc")
			w.Write(api.event)
		case r.Method == http.MethodPost && r.URL.Path == "/2018-06-01/runtime/invocation/req-1/response":
			body, _ := io.ReadAll(r.Body)
			api.response <- invocationResponse{r.Header.Clone(), body}
			w.WriteHeader(http.StatusAccepted)
		default:
			unexpectedRuntimeCall(t, w, r)
		}
	}))
	t.Cleanup(func() { close(api.stop); api.Close() })
	return api
}

// functionURLEvent is a Function URL event carrying a 2026-07-28 tools/call
// of add.
func functionURLEvent(t *testing.T) []byte {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"A":1,"B":2},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	ev, err := json.Marshal(map[string]any{
		"version": "2.0", "rawPath": "/mcp", "body": body, "isBase64Encoded": false,
		"headers": map[string]string{"content-type": "application/json", "accept": "application/json, text/event-stream",
			"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "add",
			"host": "abc.lambda-url.us-east-1.on.aws", "x-forwarded-proto": "https"},
		"requestContext": map[string]any{"domainName": "abc.lambda-url.us-east-1.on.aws",
			"http": map[string]string{"method": "POST", "path": "/mcp", "protocol": "HTTP/1.1", "sourceIp": "192.0.2.1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// unexpectedRuntimeCall fails the test on a call the loopback Runtime API
// does not serve, and answers it 404.
func unexpectedRuntimeCall(t *testing.T, w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	t.Errorf("unexpected runtime API call %s %s: %s", r.Method, r.URL.Path, body)
	w.WriteHeader(http.StatusNotFound)
}

// startChild runs TestStartChild against api with the Lambda environment
// plus env, and returns the command and its stderr.
func startChild(t *testing.T, api *runtimeAPI, env ...string) (*exec.Cmd, *mcptest.LogBuffer) {
	return runChild(t, "TestStartChild", api.URL, append([]string{"LAMBDAENV_TEST_CHILD=1",
		"AWS_LAMBDA_LOG_FORMAT=", "AWS_LAMBDA_FUNCTION_NAME=", "LAMBDAENV_TEST_TASKS="}, env...)...)
}

// runChild runs the test named test of this test binary in a child
// process, as a function under the Runtime API served at apiURL: with a
// region and test credentials, none of the MCPFN_* variables set, and env
// added. The child is killed when the test ends. It returns the command
// and its stderr.
func runChild(t *testing.T, test, apiURL string, env ...string) (*exec.Cmd, *mcptest.LogBuffer) {
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	stderr := &mcptest.LogBuffer{}
	cmd.Stderr = stderr
	cmd.Env = append(os.Environ(), "AWS_LAMBDA_RUNTIME_API="+strings.TrimPrefix(apiURL, "http://"), "_LAMBDA_SERVER_PORT=",
		"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=AKIDTEST", "AWS_SECRET_ACCESS_KEY=test",
		"MCPFN_DYNAMODB_TABLE=", "MCPFN_KEYS_SECRET_ID=", "MCPFN_STATE_KEY=", "MCPFN_STREAMING=", "MCPFN_LOG_LEVEL=",
		"MCPFN_TASK_RUNNER=", "MCPFN_TASK_CLAIM_TIMEOUT=")
	cmd.Env = append(cmd.Env, env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, stderr
}

// TestStart runs the one-call Start as a Lambda function does (in its own
// process, talking to a Runtime API) and checks the tools/call answer,
// buffered and streamed as MCPFN_STREAMING says (the content type
// aws-lambda-go gives the response tells them apart), and the one warning at
// init of a function without shared keys.
func TestStart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs a child process")
	}
	for _, c := range []struct {
		name      string
		env       []string
		streaming bool
		warn      bool
	}{
		{"buffered, per-process keys", nil, false, true},
		{"streaming, shared key", []string{"MCPFN_STREAMING=1", "MCPFN_STATE_KEY=" + func() string { _, k := mcptest.RandomKey(32); return k }()}, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			api := newRuntimeAPI(t, functionURLEvent(t))
			cmd, stderr := startChild(t, api, c.env...)
			var res invocationResponse
			select {
			case res = <-api.response:
			case <-time.After(30 * time.Second):
				t.Fatalf("no response from the function; stderr:\n%s", stderr)
			}
			// aws-lambda-go marks a streamed HTTP response by its content
			// type, and sends it chunked.
			mode := res.header.Get("Content-Type")
			var body []byte
			if c.streaming {
				// A prelude (status, headers), 8 NUL bytes, the body.
				head, rest, ok := bytes.Cut(res.body, make([]byte, 8))
				if mode != "application/vnd.awslambda.http-integration-response" || !ok || !bytes.Contains(head, []byte(`"statusCode":200`)) {
					t.Fatalf("streamed response: mode %q, %q", mode, res.body)
				}
				body = rest
			} else {
				var r struct {
					StatusCode int    `json:"statusCode"`
					Body       string `json:"body"`
				}
				if err := json.Unmarshal(res.body, &r); mode != "application/json" || err != nil || r.StatusCode != 200 {
					t.Fatalf("buffered response: mode %q, %v, %s", mode, err, res.body)
				}
				body = []byte(r.Body)
			}
			if !bytes.Contains(body, []byte(`"text":"3"`)) {
				t.Errorf("tools/call add 1 2: %s", body)
			}
			// The warning is written at init; all of stderr is read once
			// the process has ended.
			cmd.Process.Kill()
			cmd.Wait()
			n := strings.Count(stderr.String(), "MCPFN_KEYS_SECRET_ID")
			if c.warn && (n != 1 || !strings.Contains(stderr.String(), "level=WARN")) {
				t.Errorf("no shared keys: %d warnings naming MCPFN_KEYS_SECRET_ID, want 1:\n%s", n, stderr)
			}
			if !c.warn && n != 0 {
				t.Errorf("shared keys, yet:\n%s", stderr)
			}
		})
	}
}

// TestStartConfigError: a malformed variable ends the function at init
// with status 1 and a message naming it.
func TestStartConfigError(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs a child process")
	}
	api := newRuntimeAPI(t, functionURLEvent(t))
	cmd, stderr := startChild(t, api, "MCPFN_LOG_LEVEL=loud")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(stderr.String(), "MCPFN_LOG_LEVEL") {
			t.Errorf("exit %d (%v), stderr %q; want 1 naming MCPFN_LOG_LEVEL", code, err, stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the function did not exit")
	}
}

// TestStartUnsafeTasks: a function on Lambda whose server has task tools
// but no table for them ends at init with status 1 and a message naming
// MCPFN_DYNAMODB_TABLE, before it takes an invocation; without the task
// tool, the same environment serves.
func TestStartUnsafeTasks(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs a child process")
	}
	api := newRuntimeAPI(t, functionURLEvent(t))
	cmd, stderr := startChild(t, api, "AWS_LAMBDA_FUNCTION_NAME=calc", "LAMBDAENV_TEST_TASKS=1")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(stderr.String(), "MCPFN_DYNAMODB_TABLE") ||
			!strings.Contains(stderr.String(), "task tools") {
			t.Errorf("exit %d (%v), stderr %q; want 1 naming the task tools and MCPFN_DYNAMODB_TABLE", code, err, stderr)
		}
	case res := <-api.response:
		t.Fatalf("the function served an invocation: %s", res.body)
	case <-time.After(30 * time.Second):
		t.Fatal("the function did not exit")
	}

	api = newRuntimeAPI(t, functionURLEvent(t))
	_, stderr = startChild(t, api, "AWS_LAMBDA_FUNCTION_NAME=calc")
	select {
	case res := <-api.response:
		if !bytes.Contains(res.body, []byte(`\"text\":\"3\"`)) {
			t.Errorf("tools/call add 1 2: %s", res.body)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no response from the function without task tools; stderr:\n%s", stderr)
	}
}
