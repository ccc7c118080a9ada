package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/internal/testenv"
	"github.com/mcpfn/mcpfn/test/internal/dynalite"
	"github.com/mcpfn/mcpfn/test/internal/taskwire"
	"github.com/mcpfn/mcpfn/test/lambdafront/internal/invokeapi"
)

// The task tests run internal/taskfn, whose tools are tasks of the Tasks
// extension (io.modelcontextprotocol/tasks) started by the Lambda runner
// (adapters/lambda/taskrunner): the function, behind the Function URL door,
// creates a task and calls the Lambda Invoke API (InvocationType Event)
// with the real SDK client, pointed at invokeapi on loopback, which answers
// 202 and then runs the task event on the door's pool of sandboxes, the
// emulator's or the Runtime API's, as Lambda's asynchronous queue does.

// taskBins are the task bootstrap.
var taskBins = lambdaBinaries("./test/lambdafront/internal/taskfn")

const taskfnName = "taskfn"

// taskRig is the task function behind a Function URL door, with the Invoke
// API it starts its tasks through and the hook its tools report to.
type taskRig struct {
	t       *testing.T
	door    *server
	api     *invokeapi.Server
	apiURL  string
	started chan url.Values    // the tools' start reports
	out     *mcptest.LogBuffer // the function's output
}

type rigConfig struct {
	Runtime   Runtime
	Streaming bool // MCPFN_STREAMING=1 behind a RESPONSE_STREAM Function URL, as the Terraform module deploys
	// RunElsewhere runs the asynchronous invocations on sandboxes of their
	// own, other processes than those behind the door (Env must name a
	// shared store).
	RunElsewhere bool
	Dynamo       bool // keep tasks in store/dynamo on the test suite's dynalite
	// Retries and RetryDelay are Lambda's retries of failed asynchronous
	// invocations (invokeapi.Server's).
	Retries     int
	RetryDelay  time.Duration
	Concurrency int
	Timeout     time.Duration
	Env         []string
}

func startTaskRig(t *testing.T, cfg rigConfig) *taskRig {
	t.Helper()
	bootstrap, rie := rigBootstrap(t, "task", taskBins, "taskfn", cfg.Runtime)
	r := &taskRig{t: t, started: make(chan url.Values, 16), out: &mcptest.LogBuffer{}}

	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select {
		case r.started <- req.URL.Query():
		default:
			t.Errorf("unread start reports; dropped %s", req.URL.RawQuery)
		}
	}))
	t.Cleanup(hook.Close)

	// The Invoke API must be known to the function before the door starts
	// it; the door's pool, once it exists, runs its invocations.
	var pool atomic.Pointer[backend]
	r.api = invokeapi.New(taskfnName, func(ctx context.Context, payload []byte) ([]byte, error) {
		p := pool.Load()
		if p == nil {
			return nil, fmt.Errorf("no function yet")
		}
		return invokeAll(ctx, *p, payload)
	})
	r.api.Unexpected = t.Errorf
	r.api.Retries, r.api.RetryDelay = cfg.Retries, cfg.RetryDelay
	api := httptest.NewServer(r.api)
	r.apiURL = api.URL
	t.Cleanup(func() { api.Close(); r.api.Close() })

	if cfg.Concurrency == 0 {
		cfg.Concurrency = 1
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 20 * time.Second
	}
	env := append(os.Environ(),
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_REGION=us-east-1",
		"AWS_LAMBDA_FUNCTION_NAME="+taskfnName, "AWS_ENDPOINT_URL_LAMBDA="+api.URL,
		"TASKFN_HOOK_URL="+hook.URL)
	env = append(env, cfg.Env...)
	if cfg.Dynamo {
		env = append(env, dynamoEnv(t)...)
	}
	if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "MCPFN_DYNAMODB_TABLE=") }) {
		// The kit's Lambda runner needs a shared store; with tasks in
		// memory the bootstrap builds it itself.
		env = append(env, "TASKFN_LAMBDA_RUNNER=1")
	}
	mode := ModeBuffered
	if cfg.Streaming {
		mode = ModeStreaming
		env = append(env, "MCPFN_STREAMING=1")
	}
	newDoor := func() *server {
		s, err := start(context.Background(), config{
			Addr: "127.0.0.1:0", Door: DoorFunctionURL, Mode: mode, Runtime: cfg.Runtime,
			Bootstrap: bootstrap, RIE: rie, Concurrency: cfg.Concurrency, Timeout: cfg.Timeout,
			Env: env, Log: r.out, Logger: testLogger(t),
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	doors := []*server{newDoor()}
	if cfg.RunElsewhere {
		doors = append(doors, newDoor())
	}
	r.door = doors[0]
	p := doors[len(doors)-1].pool
	pool.Store(&p)
	t.Cleanup(func() {
		// Stop the queue first: its invocations run on a door's pool.
		r.api.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, s := range doors {
			if err := s.Shutdown(ctx); err != nil {
				t.Error(err)
			}
		}
		if t.Failed() {
			t.Logf("function output:\n%s", r.out.String())
		}
	})
	return r
}

// rpc sends one 2026-07-28 request that declares the Tasks extension
// through the door, and returns the JSON-RPC response.
func (r *taskRig) rpc(method, name string, params map[string]any) rpcResponse {
	r.t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{
			"elicitation": map[string]any{},
			"extensions":  map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}},
		},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {method}}
	if name != "" {
		h.Set("Mcp-Name", name)
	}
	res, b := do(r.t, http.MethodPost, r.door.URL()+"/mcp", body, h)
	var out rpcResponse
	if err := json.Unmarshal(b, &out); err != nil {
		r.t.Fatalf("%s: %d %s", method, res.StatusCode, b)
	}
	return out
}

type rpcResponse struct {
	Result *taskwire.Task `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (r *taskRig) call(tool string, args map[string]any) rpcResponse {
	r.t.Helper()
	return r.rpc("tools/call", tool, map[string]any{"name": tool, "arguments": args})
}

// create calls tool and returns the task it creates.
func (r *taskRig) create(tool string, args map[string]any) string {
	r.t.Helper()
	res := r.call(tool, args)
	if res.Result == nil || res.Result.ResultType != "task" || res.Result.TaskID == "" || res.Result.Status != "working" {
		r.t.Fatalf("tools/call %s: %+v, want a working task", tool, res)
	}
	return res.Result.TaskID
}

// get returns the task as tasks/get answers it.
func (r *taskRig) get(id string) *taskwire.Task {
	r.t.Helper()
	res := r.rpc("tasks/get", id, map[string]any{"taskId": id})
	if res.Result == nil || res.Result.TaskID != id || res.Result.ResultType != "complete" {
		r.t.Fatalf("tasks/get %s: %+v", id, res)
	}
	return res.Result
}

// delivery waits for the next invocation the Invoke API ran.
func (r *taskRig) delivery() invokeapi.Delivery {
	r.t.Helper()
	select {
	case d := <-r.api.Deliveries():
		return d
	case <-time.After(30 * time.Second):
		r.t.Fatal("no invocation ran within 30s")
		return invokeapi.Delivery{}
	}
}

// waitStarted waits for a tool's start report.
func (r *taskRig) waitStarted() url.Values {
	r.t.Helper()
	select {
	case q := <-r.started:
		return q
	case <-time.After(30 * time.Second):
		r.t.Fatal("no tool started within 30s")
		return nil
	}
}

// client is a real SDK Lambda client of the rig's Invoke API, as a caller
// with lambda:InvokeFunction would have.
func (r *taskRig) client() *awslambda.Client {
	return awslambda.New(awslambda.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(r.apiURL), RetryMaxAttempts: 1,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "test-secret"}, nil
		}),
	})
}

// invokeSync invokes the function synchronously with payload and returns
// its answer.
func (r *taskRig) invokeSync(payload []byte) []byte {
	r.t.Helper()
	out, err := r.client().Invoke(context.Background(), &awslambda.InvokeInput{FunctionName: aws.String(taskfnName), Payload: payload})
	if err != nil {
		r.t.Fatalf("Invoke %s: %v", payload, err)
	}
	if out.FunctionError != nil {
		r.t.Fatalf("Invoke %s: function error %s: %s", payload, *out.FunctionError, out.Payload)
	}
	<-r.api.Deliveries() // this invocation's own record
	return out.Payload
}

var runtimes = []Runtime{RuntimeRIE, RuntimeStream}

// TestTaskAsyncInvocation is the Lambda test of the Tasks extension: a task
// created through the Function URL door completes in an asynchronous
// invocation of the function that starts after the creating invocation has
// returned, and its result is read through another invocation. With the
// in-memory store (the kit's default) the task can only be run and read by
// the one sandbox that holds it; with store/dynamo on dynalite the
// asynchronous invocation runs in other processes than the door's, so the
// task survives every process that created or read it.
func TestTaskAsyncInvocation(t *testing.T) {
	t.Parallel()
	for _, tc := range []rigConfig{
		{Runtime: RuntimeRIE}, {Runtime: RuntimeStream}, {Runtime: RuntimeStream, Streaming: true},
		{Runtime: RuntimeRIE, Dynamo: true, RunElsewhere: true}, {Runtime: RuntimeStream, Streaming: true, Dynamo: true, RunElsewhere: true},
	} {
		store := "memory"
		if tc.Dynamo {
			store = "dynamo"
		}
		t.Run(fmt.Sprintf("%s/streaming=%v/%s", tc.Runtime, tc.Streaming, store), func(t *testing.T) {
			r := startTaskRig(t, tc)
			gate := make(chan struct{})
			r.api.Hold(gate)

			id := r.create("work", map[string]any{"text": "hello"})
			// The creating invocation has returned: the task event is
			// queued (202) and has not run.
			if n := r.api.Accepted(); n != 1 {
				t.Fatalf("%d asynchronous invocations accepted, want 1", n)
			}
			select {
			case d := <-r.api.Deliveries():
				t.Fatalf("an invocation ran before the queue was released: %+v", d)
			case q := <-r.started:
				t.Fatalf("the tool started in the creating invocation: %v", q)
			default:
			}
			if got := r.get(id); got.Status != "working" {
				t.Fatalf("before the task event: %+v, want working", got)
			}

			close(gate)
			d := r.delivery()
			want, _ := lambda.TaskEvent(id)
			if !d.Async || !bytes.Equal(d.Payload, want) || d.Err != nil {
				t.Fatalf("task invocation: async=%v payload=%s err=%v, want the task event %s", d.Async, d.Payload, d.Err, want)
			}
			var answer lambda.TaskAnswer
			if err := json.Unmarshal(d.Response, &answer); err != nil || answer.TaskID != id || answer.Error != "" {
				t.Errorf("task invocation answered %s", d.Response)
			}
			if q := r.waitStarted(); q.Get("task") != id || q.Get("tool") != "work" {
				t.Errorf("start report %v, want task %s", q, id)
			}

			got := r.get(id)
			if got.Status != "completed" || got.Result == nil || len(got.Result.Content) != 1 ||
				!strings.HasPrefix(got.Result.Content[0].Text, "done: hello (pid ") {
				t.Fatalf("after the task event: %+v, want completed with the tool's text", got)
			}
		})
	}
}

// TestTaskForgedEvents: task events that do not name a task to run do
// nothing. A caller with lambda:InvokeFunction can send the function any
// event: one naming no stored task, a malformed one, or the replay of a
// finished task's event; each is answered with its refusal, and no tool
// runs. A Function URL caller controls only what the door puts inside its
// event: a body shaped like a task event is an HTTP request like any other.
func TestTaskForgedEvents(t *testing.T) {
	t.Parallel()
	r := startTaskRig(t, rigConfig{Runtime: RuntimeStream})

	answer := func(payload []byte) lambda.TaskAnswer {
		t.Helper()
		b := r.invokeSync(payload)
		var a lambda.TaskAnswer
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatalf("answer to %s: %s", payload, b)
		}
		return a
	}
	unknown, _ := lambda.TaskEvent("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	if a := answer(unknown); a.Error != "lambda: no such task" {
		t.Errorf("unknown task: %+v", a)
	}
	for _, p := range []string{
		`{"mcpfnTask":{"taskId":"x","principal":"admin"}}`,
		`{"mcpfnTask":{"taskId":"x"},"requestContext":{"http":{"method":"POST"}}}`,
		`{"mcpfnTask":{"taskId":"` + strings.Repeat("x", 2000) + `"}}`,
	} {
		if a := answer([]byte(p)); a.Error == "" || !strings.Contains(a.Error, "task") {
			t.Errorf("%.60s: %+v, want a refusal", p, a)
		}
	}

	// A task event as the body of a Function URL request: core answers it
	// as the malformed JSON-RPC message it is.
	res, body := do(t, http.MethodPost, r.door.URL()+"/mcp", []byte(`{"mcpfnTask":{"taskId":"x"}}`),
		http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}})
	if res.StatusCode != http.StatusBadRequest {
		t.Errorf("task event as a Function URL body: %d %s", res.StatusCode, body)
	}

	// A finished task's event, replayed: the task is not runnable, nothing
	// runs again, its result stays.
	id := r.create("work", map[string]any{"text": "once"})
	if d := r.delivery(); d.Err != nil {
		t.Fatal(d.Err)
	}
	r.waitStarted()
	first := r.get(id)
	if first.Status != "completed" {
		t.Fatalf("task: %+v", first)
	}
	replay, _ := lambda.TaskEvent(id)
	for range 2 {
		if a := answer(replay); a.TaskID != id || a.Error != "" {
			t.Errorf("replay: %+v", a)
		}
	}
	if got := r.get(id); got.Status != "completed" || got.Result.Content[0].Text != first.Result.Content[0].Text {
		t.Errorf("after the replays: %+v, want %+v", got, first)
	}
	select {
	case q := <-r.started:
		t.Errorf("a replayed or forged event ran a tool: %v", q)
	default:
	}
	if n := r.api.Accepted(); n != 1 {
		t.Errorf("%d asynchronous invocations, want the task's 1", n)
	}
}

// TestTaskInvokeFailure: the SDK's retryer retries a throttled or failed
// Invoke; an Invoke that Lambda refuses (or that still fails after the
// retries) fails the task at once, and the tools/call is answered with an
// error: no task is left working with no run to come.
func TestTaskInvokeFailure(t *testing.T) {
	t.Parallel()
	r := startTaskRig(t, rigConfig{Runtime: RuntimeStream})

	r.api.Fail(invokeapi.Fault{Status: 429, Type: "TooManyRequestsException"}, invokeapi.Fault{Status: 500, Type: "ServiceException"})
	id := r.create("work", map[string]any{"text": "retried"})
	if d := r.delivery(); d.Err != nil {
		t.Fatal(d.Err)
	}
	r.waitStarted()
	if got := r.get(id); got.Status != "completed" {
		t.Errorf("after a throttle and a server error: %+v", got)
	}

	r.api.Fail(invokeapi.Fault{Status: 403, Type: "AccessDeniedException"})
	res := r.call("work", map[string]any{"text": "denied"})
	if res.Error == nil || res.Error.Code != -32603 || !strings.Contains(res.Error.Message, "could not be started") {
		t.Errorf("Invoke refused: %+v, want -32603 \"could not be started\"", res)
	}
	r.api.Fail(invokeapi.Fault{Status: 500, Type: "ServiceException"}, invokeapi.Fault{Status: 500, Type: "ServiceException"},
		invokeapi.Fault{Status: 500, Type: "ServiceException"})
	res = r.call("work", map[string]any{"text": "down"})
	if res.Error == nil || res.Error.Code != -32603 {
		t.Errorf("Invoke failing past the retries: %+v, want -32603", res)
	}
	if n := r.api.Accepted(); n != 1 {
		t.Errorf("%d asynchronous invocations accepted, want 1", n)
	}
	select {
	case q := <-r.started:
		t.Errorf("a tool ran: %v", q)
	default:
	}
	if !strings.Contains(r.out.String(), "AccessDeniedException") {
		t.Errorf("the refusal is not in the function's log")
	}
}

// dynamoEnv creates a session table on the dynalite of the test suite and
// returns the function environment that makes the kit keep tasks in it
// (store/dynamo), so that every sandbox shares them, and run them with
// the Lambda runner (MCPFN_TASK_RUNNER=lambda).
func dynamoEnv(t *testing.T) []string {
	t.Helper()
	endpoint := testenv.DynamoEndpoint(t)
	_, table := dynalite.Table(t, "lambdatasks-")
	return []string{"MCPFN_DYNAMODB_TABLE=" + table, "AWS_ENDPOINT_URL_DYNAMODB=" + endpoint, "MCPFN_TASK_RUNNER=lambda", "TASKFN_REQUIRE_SHARED=1"}
}

// waitStatus reads the task through the door until its status is want, and
// returns how long that took. Real time must pass here (a lease expiring in
// another process), so it polls, every 100 ms, for at most within.
func (r *taskRig) waitStatus(id, want string, within time.Duration) (*taskwire.Task, time.Duration) {
	r.t.Helper()
	start := time.Now()
	for {
		got := r.get(id)
		if got.Status == want {
			return got, time.Since(start)
		}
		if got.Status != "working" {
			r.t.Fatalf("task %s: %+v, want working then %s", id, got, want)
		}
		if time.Since(start) > within {
			r.t.Fatalf("task %s still %s after %v, want %s", id, got.Status, within, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestTaskCancelAcrossSandboxes: a tasks/cancel served by one sandbox
// reaches the handler running in another sandbox's asynchronous
// invocation, through the shared store, which the run reads every poll
// interval; the handler's context ends, the invocation returns and the
// task is cancelled.
func TestTaskCancelAcrossSandboxes(t *testing.T) {
	for _, rt := range runtimes {
		t.Run(string(rt), func(t *testing.T) {
			r := startTaskRig(t, rigConfig{Runtime: rt, Concurrency: 2, Env: append(dynamoEnv(t), "TASKFN_POLL=200ms")})
			id := r.create("wait", map[string]any{})
			if q := r.waitStarted(); q.Get("task") != id {
				t.Fatalf("start report %v", q)
			}
			// The running task holds one sandbox: the cancel is served by
			// the other.
			res := r.rpc("tasks/cancel", id, map[string]any{"taskId": id})
			if res.Error != nil {
				t.Fatalf("tasks/cancel: %+v", res.Error)
			}
			d := r.delivery()
			if !d.Async || d.Err != nil {
				t.Fatalf("the task's invocation: async=%v err=%v", d.Async, d.Err)
			}
			if got := r.get(id); got.Status != "cancelled" {
				t.Errorf("after tasks/cancel: %+v, want cancelled", got)
			}
		})
	}
}

// TestTaskKilledSandbox: a task whose invocation times out (its handler
// ignores its context) is killed with its sandbox, as Lambda does; the task
// is failed as soon as its lease has passed, read through another sandbox,
// and never completes.
func TestTaskKilledSandbox(t *testing.T) {
	const lease = 2 * time.Second
	r := startTaskRig(t, rigConfig{Runtime: RuntimeStream, Concurrency: 2, Timeout: 3 * time.Second,
		Env: append(dynamoEnv(t), "TASKFN_LEASE="+lease.String(), "TASKFN_POLL=200ms")})
	id := r.create("hang", map[string]any{})
	r.waitStarted()
	d := r.delivery()
	if !d.Async || d.Err == nil {
		t.Fatalf("the hanging task's invocation: async=%v err=%v, want a timeout", d.Async, d.Err)
	}
	got, took := r.waitStatus(id, "failed", 3*lease)
	if got.Error == nil {
		t.Fatalf("failed task without its error: %+v", got)
	}
	t.Logf("failed %v after the kill (lease %v): %s", took, lease, got.Error.Message)
	if took > lease {
		t.Errorf("failed %v after the kill, want within the lease (%v)", took, lease)
	}
}

// TestTaskKilledSandboxRetried: Lambda retries an asynchronous invocation
// that timed out. The retry arrives after the killed run's lease has passed
// and before anyone has read the task: it fails the task and does not run
// the tool again (a task whose run died ends failed, whoever notices it
// first), and answers without an error, so Lambda retries no more.
func TestTaskKilledSandboxRetried(t *testing.T) {
	const lease = 2 * time.Second
	r := startTaskRig(t, rigConfig{Runtime: RuntimeStream, Concurrency: 2, Timeout: 3 * time.Second, Dynamo: true,
		Retries: 2, RetryDelay: 2 * lease, Env: []string{"TASKFN_LEASE=" + lease.String(), "TASKFN_POLL=200ms"}})
	id := r.create("hang", map[string]any{})
	r.waitStarted()
	if d := r.delivery(); d.Err == nil {
		t.Fatalf("the hanging task's invocation: %+v, want a timeout", d)
	}
	d := r.delivery() // the retry
	var answer lambda.TaskAnswer
	if d.Err != nil || json.Unmarshal(d.Response, &answer) != nil || answer.TaskID != id || answer.Error != "" {
		t.Fatalf("the retry: err=%v answer=%s", d.Err, d.Response)
	}
	select {
	case q := <-r.started:
		t.Fatalf("the retry ran the tool again: %v", q)
	default:
	}
	if got := r.get(id); got.Status != "failed" {
		t.Errorf("after the retry: %+v, want failed", got)
	}
}

// TestTaskInputRound: a task that asks for input ends its asynchronous
// invocation input_required; the tasks/update that answers it, served by
// another invocation, starts the task again in a second asynchronous
// invocation, where the handler runs with the answer.
func TestTaskInputRound(t *testing.T) {
	t.Parallel()
	r := startTaskRig(t, rigConfig{Runtime: RuntimeStream})
	id := r.create("ask", map[string]any{})
	if d := r.delivery(); !d.Async || d.Err != nil {
		t.Fatalf("first run: %+v", d)
	}
	r.waitStarted()
	got := r.get(id)
	if got.Status != "input_required" || got.InputRequests["confirm"].Method != "elicitation/create" {
		t.Fatalf("after the first run: %+v, want input_required asking confirm", got)
	}
	res := r.rpc("tasks/update", id, map[string]any{"taskId": id,
		"inputResponses": map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}})
	if res.Error != nil {
		t.Fatalf("tasks/update: %+v", res.Error)
	}
	if d := r.delivery(); !d.Async || d.Err != nil {
		t.Fatalf("second run: %+v", d)
	}
	r.waitStarted()
	got = r.get(id)
	if got.Status != "completed" || got.Result == nil || !strings.HasPrefix(got.Result.Content[0].Text, "answered: accept true") {
		t.Fatalf("after the answer: %+v, want completed with the answer", got)
	}
	if n := r.api.Accepted(); n != 2 {
		t.Errorf("%d asynchronous invocations, want 2 (one per run)", n)
	}
}
