package lambdaenv_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mcpfn/mcpfn/adapters/lambda/taskrunner"
	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/deploy/lambdaenv"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/internal/testenv"
	"github.com/mcpfn/mcpfn/store/dynamo"
	"github.com/mcpfn/mcpfn/store/secretsmanager"
)

// vars are the variables Load reads; setenv clears them all.
var vars = []string{"MCPFN_DYNAMODB_TABLE", "MCPFN_KEYS_SECRET_ID", "MCPFN_STATE_KEY", "MCPFN_ALLOWED_ORIGINS",
	"MCPFN_LOG_LEVEL", "MCPFN_STREAMING", "MCPFN_AUTH_RESOURCE", "MCPFN_AUTH_ISSUER", "MCPFN_AUTH_JWKS_URL",
	"MCPFN_AUTH_SCOPES", "MCPFN_AUTH_METADATA_URL", "MCPFN_AUTH_METADATA_PATH", "MCPFN_TASK_RUNNER", "MCPFN_TASK_CLAIM_TIMEOUT"}

// setenv clears the variables Load reads, gives the process the AWS
// environment of a Lambda function (dummy credentials, no endpoint
// overrides), then sets kv (name, value, name, value...).
func setenv(t *testing.T, kv ...string) {
	t.Helper()
	for _, k := range vars {
		t.Setenv(k, "")
	}
	for k, v := range map[string]string{
		"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "test", "AWS_SESSION_TOKEN": "",
		"AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_DYNAMODB": "", "AWS_ENDPOINT_URL_SECRETS_MANAGER": "", "AWS_LAMBDA_LOG_FORMAT": "",
		"AWS_LAMBDA_FUNCTION_NAME": "", "AWS_ENDPOINT_URL_LAMBDA": "",
	} {
		t.Setenv(k, v)
	}
	mcptest.Setenv(t, kv...)
}

func TestDefaults(t *testing.T) {
	setenv(t)
	cfg, err := lambdaenv.Load(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := cfg.Server
	if opts.SessionStore != nil || opts.Keys != nil || opts.AllowedOrigins != nil || opts.Authenticator != nil {
		t.Errorf("with nothing set: SessionStore %v, Keys %v, AllowedOrigins %v, Authenticator %v; want the in-memory defaults (nil)",
			opts.SessionStore, opts.Keys, opts.AllowedOrigins, opts.Authenticator)
	}
	if opts.TaskStore != nil || opts.TaskRunner != nil {
		t.Errorf("with nothing set: TaskStore %v, TaskRunner %v; want the in-process defaults (nil)", opts.TaskStore, opts.TaskRunner)
	}
	if opts.Logger == nil || !opts.Logger.Enabled(t.Context(), slog.LevelInfo) || opts.Logger.Enabled(t.Context(), slog.LevelDebug) {
		t.Error("the default logger does not log at level info")
	}
	logged, lines := loadStderr(t)
	logged.Server.Logger.Info("hello", "k", "v")
	if line, err := lines.ReadString('\n'); err != nil || !strings.Contains(line, "level=INFO msg=hello k=v") {
		t.Errorf("the default log line is %q (%v), want text", line, err)
	}
	if cfg.Lambda.Streaming || cfg.Lambda.Logger != opts.Logger {
		t.Errorf("Lambda options = %+v, want buffered with the server's logger", cfg.Lambda)
	}
	// Each call returns new options.
	again, _ := lambdaenv.Load(t.Context(), nil)
	if again.Server == cfg.Server || again.Lambda == cfg.Lambda {
		t.Error("two Loads share their options")
	}
}

// loadStderr calls Load with os.Stderr swapped for a pipe, whose read side
// it returns: the logger writes to the os.Stderr of when Load ran.
func loadStderr(t *testing.T) (*lambdaenv.Config, *bufio.Reader) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	stderr := os.Stderr
	os.Stderr = w
	cfg, err := lambdaenv.Load(t.Context(), nil)
	os.Stderr = stderr
	if err != nil {
		t.Fatal(err)
	}
	return cfg, bufio.NewReader(r)
}

// TestLambdaJSONLogs: with Lambda's JSON log format, the logs on stderr are
// JSON lines with the fields of that format (timestamp, level, message) and
// the invocation's requestId.
func TestLambdaJSONLogs(t *testing.T) {
	setenv(t, "AWS_LAMBDA_LOG_FORMAT", "JSON", "MCPFN_LOG_LEVEL", "warn")
	cfg, lines := loadStderr(t)
	l := cfg.Server.Logger
	if l.Enabled(t.Context(), slog.LevelInfo) {
		t.Error("MCPFN_LOG_LEVEL=warn: info is enabled")
	}
	ctx := lambdacontext.NewContext(t.Context(), &lambdacontext.LambdaContext{AwsRequestID: "req-7"})
	l.WarnContext(ctx, "hello", "k", "v")
	line, err := lines.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(line, &rec); err != nil || rec["message"] != "hello" || rec["level"] != "WARN" ||
		rec["requestId"] != "req-7" || rec["timestamp"] == nil || rec["k"] != "v" {
		t.Errorf("a JSON log line: %s (%v), want timestamp, level WARN, message hello, requestId req-7", line, err)
	}
}

func TestValues(t *testing.T) {
	secret, b64 := mcptest.RandomKey(32)
	setenv(t, "MCPFN_STATE_KEY", b64, "MCPFN_ALLOWED_ORIGINS", " https://a.example ,https://b.example:8443,,",
		"MCPFN_LOG_LEVEL", "debug", "MCPFN_DYNAMODB_TABLE", "sessions-test", "MCPFN_STREAMING", "1")
	cfg, err := lambdaenv.Load(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := cfg.Server
	// The key's id is derived from the key, so that a replaced key shows
	// as an unknown id.
	keys, ok := opts.Keys.(core.StaticKeys)
	if !ok || len(keys) != 1 || !bytes.Equal(keys[0].Secret, secret) || !strings.HasPrefix(keys[0].ID, "env-") {
		t.Errorf("Keys = %v, want the static key", opts.Keys)
	}
	_, other := mcptest.RandomKey(32)
	t.Setenv("MCPFN_STATE_KEY", other)
	if cfg2, err := lambdaenv.Load(t.Context(), nil); err != nil || cfg2.Server.Keys.(core.StaticKeys)[0].ID == keys[0].ID {
		t.Errorf("another key has the same id %q (%v)", keys[0].ID, err)
	}
	if want := []string{"https://a.example", "https://b.example:8443"}; !reflect.DeepEqual(opts.AllowedOrigins, want) {
		t.Errorf("AllowedOrigins = %q, want %q", opts.AllowedOrigins, want)
	}
	if !opts.Logger.Enabled(t.Context(), slog.LevelDebug) {
		t.Error("MCPFN_LOG_LEVEL=debug: the logger does not log debug")
	}
	if s, ok := opts.SessionStore.(*dynamo.Store); !ok || s.TableName() != "sessions-test" {
		t.Errorf("SessionStore = %#v, want a dynamo.Store on sessions-test", opts.SessionStore)
	}
	if s, ok := opts.TaskStore.(*dynamo.TaskStore); !ok || s.TableName() != "sessions-test" {
		t.Errorf("TaskStore = %#v, want a dynamo.TaskStore on sessions-test (the tasks share the session table)", opts.TaskStore)
	}
	if opts.TaskRunner != nil {
		t.Errorf("TaskRunner = %#v, want nil (in-process) without MCPFN_TASK_RUNNER", opts.TaskRunner)
	}
	t.Setenv("MCPFN_TASK_RUNNER", "inprocess")
	if cfg, err := lambdaenv.Load(t.Context(), nil); err != nil || cfg.Server.TaskRunner != nil {
		t.Errorf("MCPFN_TASK_RUNNER=inprocess: %v, runner %v; want the in-process runner (nil)", err, cfg.Server.TaskRunner)
	}
	t.Setenv("MCPFN_TASK_RUNNER", "")
	if !cfg.Lambda.Streaming {
		t.Error("MCPFN_STREAMING=1: not streaming")
	}
	for v, want := range map[string]bool{"0": false, "true": true, "false": false} {
		t.Setenv("MCPFN_STREAMING", v)
		if cfg, err := lambdaenv.Load(t.Context(), nil); err != nil || cfg.Lambda.Streaming != want {
			t.Errorf("MCPFN_STREAMING=%s: %v, want streaming %v", v, err, want)
		}
	}
	t.Setenv("MCPFN_ALLOWED_ORIGINS", "*")
	if cfg, err := lambdaenv.Load(t.Context(), nil); err != nil || !reflect.DeepEqual(cfg.Server.AllowedOrigins, []string{"*"}) {
		t.Errorf("MCPFN_ALLOWED_ORIGINS=*: %v, %v", cfg, err)
	}
}

// TestAuth: MCPFN_AUTH_* make the server an OAuth protected resource,
// whose metadata document names the resource and the issuer and whose
// challenge names the required scopes.
func TestAuth(t *testing.T) {
	setenv(t, "MCPFN_AUTH_RESOURCE", "https://mcp.example/mcp", "MCPFN_AUTH_ISSUER", "https://as.example",
		"MCPFN_AUTH_JWKS_URL", "https://as.example/jwks", "MCPFN_AUTH_SCOPES", "mcp  tools", "MCPFN_LOG_LEVEL", "error")
	cfg, err := lambdaenv.Load(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg.Server.Authenticator.(*auth.ProtectedResource); !ok {
		t.Fatalf("Authenticator = %T, want *auth.ProtectedResource", cfg.Server.Authenticator)
	}
	srv := core.NewServer(core.Implementation{Name: "auth-test", Version: "1"}, cfg.Server)
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "https://mcp.example/.well-known/oauth-protected-resource/mcp", nil))
	var md struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &md); err != nil || md.Resource != "https://mcp.example/mcp" ||
		!reflect.DeepEqual(md.AuthorizationServers, []string{"https://as.example"}) {
		t.Errorf("metadata: %d %s (%v)", rec.Code, rec.Body, err)
	}
	rec = httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "https://mcp.example/mcp", strings.NewReader(`{}`)))
	if c := rec.Header().Get("WWW-Authenticate"); rec.Code != http.StatusUnauthorized || !strings.Contains(c, `scope="mcp tools"`) {
		t.Errorf("no token: %d %q", rec.Code, c)
	}
}

func TestErrors(t *testing.T) {
	_, short := mcptest.RandomKey(31)
	_, good := mcptest.RandomKey(32)
	for name, c := range map[string]struct {
		kv   []string
		name string // the variable the error must name
	}{
		"short key":          {[]string{"MCPFN_STATE_KEY", short}, "MCPFN_STATE_KEY"},
		"not base64":         {[]string{"MCPFN_STATE_KEY", "not base64!"}, "MCPFN_STATE_KEY"},
		"two key kinds":      {[]string{"MCPFN_STATE_KEY", good, "MCPFN_KEYS_SECRET_ID", "mcpfn/state-keys"}, "MCPFN_STATE_KEY"},
		"bad level":          {[]string{"MCPFN_LOG_LEVEL", "loud"}, "MCPFN_LOG_LEVEL"},
		"bad table name":     {[]string{"MCPFN_DYNAMODB_TABLE", "a b"}, "MCPFN_DYNAMODB_TABLE"},
		"bad streaming":      {[]string{"MCPFN_STREAMING", "yes please"}, "MCPFN_STREAMING"},
		"bad origin":         {[]string{"MCPFN_ALLOWED_ORIGINS", "https://a.example,a.example"}, "MCPFN_ALLOWED_ORIGINS"},
		"origin with path":   {[]string{"MCPFN_ALLOWED_ORIGINS", "https://a.example/app"}, "MCPFN_ALLOWED_ORIGINS"},
		"resource no issuer": {[]string{"MCPFN_AUTH_RESOURCE", "https://mcp.example/mcp"}, "MCPFN_AUTH_ISSUER"},
		"issuer no resource": {[]string{"MCPFN_AUTH_ISSUER", "https://as.example"}, "MCPFN_AUTH_RESOURCE"},
		"bad resource":       {[]string{"MCPFN_AUTH_RESOURCE", "mcp.example", "MCPFN_AUTH_ISSUER", "https://as.example"}, "MCPFN_AUTH_RESOURCE"},
		"no credentials":     {[]string{"MCPFN_DYNAMODB_TABLE", "sessions", "AWS_ACCESS_KEY_ID", ""}, "MCPFN_DYNAMODB_TABLE"},
		"no region":          {[]string{"MCPFN_KEYS_SECRET_ID", "keys", "AWS_REGION", ""}, "AWS_REGION"},
		"bad task runner":    {[]string{"MCPFN_TASK_RUNNER", "goroutines"}, "MCPFN_TASK_RUNNER"},
		"lambda runner without a table": {[]string{"MCPFN_TASK_RUNNER", "lambda", "AWS_LAMBDA_FUNCTION_NAME", "fn"},
			"MCPFN_DYNAMODB_TABLE"},
		"lambda runner without the function name": {[]string{"MCPFN_TASK_RUNNER", "lambda", "MCPFN_DYNAMODB_TABLE", "sessions"},
			"AWS_LAMBDA_FUNCTION_NAME"},
		"zero claim timeout":     {[]string{"MCPFN_TASK_CLAIM_TIMEOUT", "0"}, "MCPFN_TASK_CLAIM_TIMEOUT"},
		"negative claim timeout": {[]string{"MCPFN_TASK_CLAIM_TIMEOUT", "-1m"}, "MCPFN_TASK_CLAIM_TIMEOUT"},
		"bad claim timeout":      {[]string{"MCPFN_TASK_CLAIM_TIMEOUT", "soon"}, "MCPFN_TASK_CLAIM_TIMEOUT"},
		"huge claim timeout":     {[]string{"MCPFN_TASK_CLAIM_TIMEOUT", "99999999999999"}, "MCPFN_TASK_CLAIM_TIMEOUT"},
	} {
		t.Run(name, func(t *testing.T) {
			setenv(t, c.kv...)
			if cfg, err := lambdaenv.Load(t.Context(), nil); err == nil {
				t.Errorf("Load() = %+v, want an error", cfg)
			} else if !strings.Contains(err.Error(), c.name) {
				t.Errorf("error %q does not name %s", err, c.name)
			}
		})
	}
}

// TestTaskRunnerLambda: MCPFN_TASK_RUNNER=lambda with its table and
// function name gives the server the Lambda runner (never the in-process
// runner, whose tasks Lambda would freeze), which invokes the function
// Lambda names in AWS_LAMBDA_FUNCTION_NAME, asynchronously, at the
// endpoint AWS_ENDPOINT_URL_LAMBDA overrides.
func TestTaskRunnerLambda(t *testing.T) {
	var mu sync.Mutex
	var got []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.URL.Path+" "+r.Header.Get("X-Amz-Invocation-Type")+" "+string(b))
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	defer hs.Close()
	setenv(t, "MCPFN_TASK_RUNNER", "lambda", "MCPFN_DYNAMODB_TABLE", "sessions", "AWS_LAMBDA_FUNCTION_NAME", "my-fn",
		"AWS_ENDPOINT_URL_LAMBDA", hs.URL)
	cfg, err := lambdaenv.Load(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	runner, ok := cfg.Server.TaskRunner.(*taskrunner.Runner)
	if !ok {
		t.Fatalf("TaskRunner = %T, want *taskrunner.Runner", cfg.Server.TaskRunner)
	}
	if err := runner.Start(t.Context(), "task-1"); err != nil {
		t.Fatal(err)
	}
	want := `/2015-03-31/functions/my-fn/invocations Event {"mcpfnTask":{"taskId":"task-1"}}`
	if len(got) != 1 || got[0] != want {
		t.Errorf("invocations %q, want [%s]", got, want)
	}
}

// TestAWSConfig: Options.AWSConfig replaces LambdaAWSConfig, and is called
// only when a variable needs AWS.
func TestAWSConfig(t *testing.T) {
	setenv(t, "AWS_ACCESS_KEY_ID", "")
	calls := 0
	opts := &lambdaenv.Options{AWSConfig: func(context.Context) (aws.Config, error) {
		calls++
		return aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("A", "B", "")}, nil
	}}
	if _, err := lambdaenv.Load(t.Context(), opts); err != nil || calls != 0 {
		t.Fatalf("nothing needing AWS: %v, %d calls", err, calls)
	}
	t.Setenv("MCPFN_DYNAMODB_TABLE", "sessions")
	if _, err := lambdaenv.Load(t.Context(), opts); err != nil || calls != 1 {
		t.Fatalf("with a table: %v, %d calls", err, calls)
	}
}

// smServer is a loopback Secrets Manager speaking the service's JSON 1.1
// wire protocol for the two operations store/secretsmanager uses, holding
// one secret with one AWSCURRENT version.
type smServer struct {
	*httptest.Server
	mu    sync.Mutex
	calls []string
}

func newSMServer(t *testing.T, secret []byte) *smServer {
	s := &smServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ SecretId, VersionId string }
		json.NewDecoder(r.Body).Decode(&in)
		op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "secretsmanager.")
		s.mu.Lock()
		s.calls = append(s.calls, op+" "+in.SecretId)
		s.mu.Unlock()
		if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKIDTEST/") {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		switch op {
		case "DescribeSecret":
			fmt.Fprintf(w, `{"Name":%q,"VersionIdsToStages":{"v1":["AWSCURRENT"]}}`, in.SecretId)
		case "GetSecretValue":
			fmt.Fprintf(w, `{"Name":%q,"VersionId":"v1","SecretString":%q}`, in.SecretId,
				`{"key":"`+base64.StdEncoding.EncodeToString(secret)+`"}`)
		default:
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"__type":"InvalidRequestException","message":"unknown operation %s"}`, op)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// TestSecretsManager checks that MCPFN_KEYS_SECRET_ID reads the keys from
// the secret, with the Lambda credentials, through the endpoint the AWS
// environment names.
func TestSecretsManager(t *testing.T) {
	secret, _ := mcptest.RandomKey(32)
	sm := newSMServer(t, secret)
	setenv(t, "MCPFN_KEYS_SECRET_ID", "mcpfn/state-keys", "AWS_ENDPOINT_URL_SECRETS_MANAGER", sm.URL)
	cfg, err := lambdaenv.Load(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg.Server.Keys.(*secretsmanager.Keys); !ok {
		t.Fatalf("Keys = %T, want *secretsmanager.Keys", cfg.Server.Keys)
	}
	keys, err := cfg.Server.Keys.Keys(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || !bytes.Equal(keys[0].Secret, secret) {
		t.Errorf("keys = %v, want the secret's one key", keys)
	}
	if want := []string{"DescribeSecret mcpfn/state-keys", "GetSecretValue mcpfn/state-keys"}; !reflect.DeepEqual(sm.calls, want) {
		t.Errorf("Secrets Manager calls = %q, want %q", sm.calls, want)
	}
}

// TestSharedAcrossProcesses builds two servers from the same environment,
// as two Lambda instances would (the table in dynalite, the keys in the
// loopback Secrets Manager), and checks that a task created on one is
// found at once and completed on the other, that a legacy session created
// on one is served by the other, and that state sealed by one opens on the
// other. It needs dynalite (test/dynalite/with.sh).
func TestSharedAcrossProcesses(t *testing.T) {
	endpoint := testenv.DynamoEndpoint(t)
	table := fmt.Sprintf("lambdaenv-%d", time.Now().UnixNano())
	client := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "test", "")})
	if err := dynamo.CreateTable(t.Context(), client, table); err != nil {
		t.Fatal(err)
	}
	secret, _ := mcptest.RandomKey(32)
	sm := newSMServer(t, secret)
	setenv(t, "MCPFN_DYNAMODB_TABLE", table, "MCPFN_KEYS_SECRET_ID", "mcpfn/keys", "AWS_ENDPOINT_URL_DYNAMODB", endpoint,
		"AWS_ENDPOINT_URL_SECRETS_MANAGER", sm.URL, "MCPFN_LOG_LEVEL", "error")

	var urls []string
	for range 2 {
		cfg, err := lambdaenv.Load(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		srv := core.NewServer(core.Implementation{Name: "lambdaenv-test", Version: "1.0.0"}, cfg.Server)
		core.AddTool(srv, &core.Tool{Name: "confirm", Description: "Asks first."},
			func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
				if _, ok := req.Input.Elicitation("ok"); !ok {
					return "", core.InputRequired(core.InputRequests{"ok": core.ElicitForm("Sure?", map[string]any{"type": "object", "properties": map[string]any{}})}, "step-1")
				}
				return "state " + req.Input.State(), nil
			})
		core.AddTool(srv, &core.Tool{Name: "job", Description: "A task."},
			func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
				return "done in task " + req.TaskID(), nil
			}, &core.ToolOptions{TaskSupport: core.TaskRequired})
		hs := httptest.NewServer(srv)
		t.Cleanup(hs.Close)
		t.Cleanup(func() { srv.Close() })
		urls = append(urls, hs.URL)
	}
	ctx := t.Context()

	// A task created on one server resolves on the other at once
	// (tasks.md §Task Creation: CreateTaskResult only once tasks/get
	// resolves), and its outcome is read there.
	taskCaps := map[string]any{"extensions": map[string]any{core.ExtensionTasks: map[string]any{}}}
	id, err := (&mcptest.Client{URL: urls[0], Caps: taskCaps}).CreateTask(ctx, "job", nil)
	if err != nil {
		t.Fatal(err)
	}
	for polls := 1; ; polls++ {
		if polls > 5000 {
			t.Fatalf("the task is still working after %d polls", polls)
		}
		res, err := (&mcptest.Client{URL: urls[1], Caps: taskCaps}).Call(ctx, "tasks/get", map[string]any{"taskId": id},
			http.Header{"Mcp-Name": {id}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Error != nil {
			t.Fatalf("tasks/get on the other server: %+v (the task must be durable once created)", res.Error)
		}
		var task struct {
			Status string `json:"status"`
			Result struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if err := res.Decode(&task); err != nil {
			t.Fatal(err)
		}
		if task.Status == "working" {
			continue // the other server's runner has not finished yet
		}
		if task.Status != "completed" || len(task.Result.Content) == 0 || task.Result.Content[0].Text != "done in task "+id {
			t.Fatalf("task on the other server: %s", res.Result)
		}
		break
	}

	a := &mcptest.Client{URL: urls[0]}
	if _, err := a.Initialize(ctx, "2025-11-25", nil); err != nil {
		t.Fatal(err)
	}
	b := &mcptest.Client{URL: urls[1], SessionID: a.SessionID, Version: a.Version}
	res, err := b.LegacyCall(ctx, "tools/list", nil, nil)
	if err != nil || res.Status != http.StatusOK || res.Error != nil {
		t.Fatalf("tools/list on the other server, session %s: %v %+v", a.SessionID, err, res)
	}

	caps := map[string]any{"elicitation": map[string]any{}}
	res, err = (&mcptest.Client{URL: urls[0], Caps: caps}).Call(ctx, "tools/call", map[string]any{"name": "confirm", "arguments": map[string]any{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var first struct {
		ResultType   string `json:"resultType"`
		RequestState string `json:"requestState"`
	}
	if err := res.Decode(&first); err != nil || first.RequestState == "" {
		t.Fatalf("first round: %v %s", err, res.Result)
	}
	res, err = (&mcptest.Client{URL: urls[1], Caps: caps}).Call(ctx, "tools/call", map[string]any{"name": "confirm", "arguments": map[string]any{},
		"inputResponses": map[string]any{"ok": map[string]any{"action": "accept", "content": map[string]any{}}},
		"requestState":   first.RequestState}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(res.Result, []byte("state step-1")) {
		t.Errorf("second round on the other server: %s %+v", res.Result, res.Error)
	}
}
