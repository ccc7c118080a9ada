package envconfig_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/examples/internal/envconfig"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/internal/testenv"
	"github.com/mcpfn/mcpfn/store/dynamo"
	"github.com/mcpfn/mcpfn/store/secretsmanager"
)

var vars = []string{"MCPFN_DYNAMODB_TABLE", "MCPFN_KEYS_SECRET_ID", "MCPFN_STATE_KEY", "MCPFN_ALLOWED_ORIGINS", "MCPFN_LOG_LEVEL"}

// setenv clears the variables Load reads, points the AWS SDK at nothing
// real, then sets kv (name, value, name, value...).
func setenv(t *testing.T, kv ...string) {
	t.Helper()
	for _, k := range vars {
		t.Setenv(k, "")
	}
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "test",
		"AWS_CONFIG_FILE": dir + "/config", "AWS_SHARED_CREDENTIALS_FILE": dir + "/credentials",
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_DYNAMODB": "",
		"AWS_ENDPOINT_URL_SECRETS_MANAGER": "", "AWS_PROFILE": "", "AWS_LAMBDA_LOG_FORMAT": "",
	} {
		t.Setenv(k, v)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		t.Setenv(kv[i], kv[i+1])
	}
}

func randomKey(n int) ([]byte, string) {
	b := make([]byte, n)
	rand.Read(b)
	return b, base64.StdEncoding.EncodeToString(b)
}

func TestDefaults(t *testing.T) {
	setenv(t)
	opts, err := envconfig.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if opts.SessionStore != nil || opts.Keys != nil || opts.AllowedOrigins != nil {
		t.Errorf("with nothing set: SessionStore %v, Keys %v, AllowedOrigins %v; want the in-memory defaults (nil)",
			opts.SessionStore, opts.Keys, opts.AllowedOrigins)
	}
	if opts.Logger == nil || !opts.Logger.Enabled(t.Context(), slog.LevelInfo) || opts.Logger.Enabled(t.Context(), slog.LevelDebug) {
		t.Error("the default logger does not log at level info")
	}
	if _, ok := opts.Logger.Handler().(*slog.TextHandler); !ok {
		t.Errorf("the default handler is %T, want text", opts.Logger.Handler())
	}
}

func TestLambdaJSONLogs(t *testing.T) {
	setenv(t, "AWS_LAMBDA_LOG_FORMAT", "JSON", "MCPFN_LOG_LEVEL", "warn")
	opts, err := envconfig.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := opts.Logger.Handler().(*slog.JSONHandler); !ok || opts.Logger.Enabled(t.Context(), slog.LevelInfo) {
		t.Errorf("with Lambda's JSON log format: handler %T (want JSON), info enabled %v (want false)",
			opts.Logger.Handler(), opts.Logger.Enabled(t.Context(), slog.LevelInfo))
	}
}

func TestValues(t *testing.T) {
	secret, b64 := randomKey(32)
	setenv(t, "MCPFN_STATE_KEY", b64, "MCPFN_ALLOWED_ORIGINS", " https://a.example ,https://b.example:8443,,",
		"MCPFN_LOG_LEVEL", "debug", "MCPFN_DYNAMODB_TABLE", "sessions-test")
	opts, err := envconfig.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := (core.StaticKeys{{ID: "env", Secret: secret}}); !reflect.DeepEqual(opts.Keys, want) {
		t.Errorf("Keys = %v, want the static key", opts.Keys)
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
}

func TestErrors(t *testing.T) {
	_, short := randomKey(31)
	_, good := randomKey(32)
	for name, kv := range map[string][]string{
		"short key":      {"MCPFN_STATE_KEY", short},
		"not base64":     {"MCPFN_STATE_KEY", "not base64!"},
		"two key kinds":  {"MCPFN_STATE_KEY", good, "MCPFN_KEYS_SECRET_ID", "mcpfn/state-keys"},
		"bad level":      {"MCPFN_LOG_LEVEL", "loud"},
		"bad table name": {"MCPFN_DYNAMODB_TABLE", "a b"},
	} {
		t.Run(name, func(t *testing.T) {
			setenv(t, kv...)
			if opts, err := envconfig.Load(t.Context()); err == nil {
				t.Errorf("Load() = %+v, want an error", opts)
			} else if !strings.Contains(err.Error(), "MCPFN_") {
				t.Errorf("error %q does not name the variable", err)
			}
		})
	}
}

// TestSecretsManager checks that MCPFN_KEYS_SECRET_ID reads the keys from
// the secret, through the endpoint the AWS environment names.
func TestSecretsManager(t *testing.T) {
	secret, _ := randomKey(32)
	var calls []string
	sm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ SecretId, VersionId string }
		json.NewDecoder(r.Body).Decode(&in)
		op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "secretsmanager.")
		calls = append(calls, op+" "+in.SecretId)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		switch op {
		case "DescribeSecret":
			fmt.Fprintf(w, `{"Name":%q,"VersionIdsToStages":{"v1":["AWSCURRENT"]}}`, in.SecretId)
		case "GetSecretValue":
			fmt.Fprintf(w, `{"Name":%q,"VersionId":"v1","SecretString":%q}`, in.SecretId,
				`{"key":"`+base64.StdEncoding.EncodeToString(secret)+`"}`)
		default:
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	defer sm.Close()
	setenv(t, "MCPFN_KEYS_SECRET_ID", "mcpfn/state-keys", "AWS_ENDPOINT_URL_SECRETS_MANAGER", sm.URL)
	opts, err := envconfig.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := opts.Keys.(*secretsmanager.Keys); !ok {
		t.Fatalf("Keys = %T, want *secretsmanager.Keys", opts.Keys)
	}
	keys, err := opts.Keys.Keys(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || !bytes.Equal(keys[0].Secret, secret) {
		t.Errorf("keys = %v, want the secret's one key", keys)
	}
	if want := []string{"DescribeSecret mcpfn/state-keys", "GetSecretValue mcpfn/state-keys"}; !reflect.DeepEqual(calls, want) {
		t.Errorf("Secrets Manager calls = %q, want %q", calls, want)
	}
}

// TestSharedAcrossProcesses builds two servers from the same environment,
// as two Lambda instances would, and checks that a legacy session created
// on one is served by the other, and that state sealed by one opens on the
// other. It needs dynalite (test/dynalite/with.sh).
func TestSharedAcrossProcesses(t *testing.T) {
	endpoint := testenv.DynamoEndpoint(t)
	table := fmt.Sprintf("envconfig-%d", time.Now().UnixNano())
	client := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "test", "")})
	if err := dynamo.CreateTable(t.Context(), client, table); err != nil {
		t.Fatal(err)
	}
	_, key := randomKey(32)
	setenv(t, "MCPFN_DYNAMODB_TABLE", table, "MCPFN_STATE_KEY", key, "AWS_ENDPOINT_URL_DYNAMODB", endpoint, "MCPFN_LOG_LEVEL", "error")

	var urls []string
	for range 2 {
		opts, err := envconfig.Load(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		srv := core.NewServer(core.Implementation{Name: "envconfig-test", Version: "1.0.0"}, opts)
		core.AddTool(srv, &core.Tool{Name: "confirm", Description: "Asks first."},
			func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
				if _, ok := req.Input.Elicitation("ok"); !ok {
					return "", core.InputRequired(core.InputRequests{"ok": core.ElicitForm("Sure?", map[string]any{"type": "object", "properties": map[string]any{}})}, "step-1")
				}
				return "state " + req.Input.State(), nil
			})
		hs := httptest.NewServer(srv)
		t.Cleanup(hs.Close)
		urls = append(urls, hs.URL)
	}
	ctx := t.Context()

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
