package gcfenv_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/deploy/gcfenv"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

var vars = []string{"MCPFN_DYNAMODB_TABLE", "MCPFN_KEYS_SECRET_ID", "MCPFN_STATE_KEY", "MCPFN_ALLOWED_ORIGINS",
	"MCPFN_LOG_LEVEL", "MCPFN_LOG_FORMAT", "MCPFN_STREAMING", "MCPFN_AUTH_RESOURCE", "MCPFN_AUTH_ISSUER", "MCPFN_AUTH_JWKS_URL",
	"MCPFN_AUTH_SCOPES", "MCPFN_AUTH_METADATA_URL", "MCPFN_AUTH_METADATA_PATH", "MCPFN_TASK_RUNNER", "MCPFN_TASK_CLAIM_TIMEOUT",
	"MCPFN_MAX_INSTANCES"}

// setenv clears the variables Load reads, then sets kv (name, value...).
func setenv(t *testing.T, kv ...string) {
	t.Helper()
	for _, k := range vars {
		t.Setenv(k, "")
	}
	mcptest.Setenv(t, kv...)
}

func TestDefaults(t *testing.T) {
	setenv(t)
	opts, err := gcfenv.Load()
	if err != nil {
		t.Fatal(err)
	}
	if opts.SessionStore != nil || opts.Keys != nil || opts.AllowedOrigins != nil || opts.Authenticator != nil ||
		opts.TaskStore != nil || opts.TaskRunner != nil {
		t.Errorf("with nothing set: %+v; want the in-memory defaults", opts)
	}
	t.Setenv("MCPFN_TASK_RUNNER", "inprocess")
	if opts, err := gcfenv.Load(); err != nil || opts.TaskStore != nil || opts.TaskRunner != nil {
		t.Errorf("MCPFN_TASK_RUNNER=inprocess: %v; want the in-process defaults", err)
	}
	t.Setenv("MCPFN_TASK_RUNNER", "")
	if _, ok := opts.Logger.Handler().(*slog.JSONHandler); !ok || !opts.Logger.Enabled(t.Context(), slog.LevelInfo) || opts.Logger.Enabled(t.Context(), slog.LevelDebug) {
		t.Errorf("the default logger: %T, want JSON at level info", opts.Logger.Handler())
	}
	t.Setenv("MCPFN_LOG_FORMAT", "text")
	if opts, err := gcfenv.Load(); err != nil {
		t.Fatal(err)
	} else if _, ok := opts.Logger.Handler().(*slog.TextHandler); !ok {
		t.Errorf("MCPFN_LOG_FORMAT=text: %T", opts.Logger.Handler())
	}
}

// TestCloudLoggingFields: the JSON lines on stderr carry the severity and
// message fields Cloud Logging reads. The logger writes to the os.Stderr
// of when Load ran, so the test swaps it for a pipe around Load.
func TestCloudLoggingFields(t *testing.T) {
	setenv(t, "MCPFN_LOG_LEVEL", "debug")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	stderr := os.Stderr
	os.Stderr = w
	opts, err := gcfenv.Load()
	os.Stderr = stderr
	if err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewReader(r)
	for _, l := range []struct {
		level slog.Level
		want  string
	}{{slog.LevelDebug, "DEBUG"}, {slog.LevelInfo, "INFO"}, {slog.LevelWarn, "WARNING"}, {slog.LevelError, "ERROR"}} {
		opts.Logger.Log(t.Context(), l.level, "hello", "k", "v")
		line, err := lines.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil || rec["severity"] != l.want || rec["message"] != "hello" || rec["k"] != "v" {
			t.Errorf("level %v: %s (%v), want severity %s and message hello", l.level, line, err, l.want)
		}
	}
}

func TestValues(t *testing.T) {
	secret, b64 := mcptest.RandomKey(32)
	setenv(t, "MCPFN_STATE_KEY", b64, "MCPFN_ALLOWED_ORIGINS", "https://a.example, https://b.example:8443", "MCPFN_LOG_LEVEL", "warn")
	opts, err := gcfenv.Load()
	if err != nil {
		t.Fatal(err)
	}
	keys, ok := opts.Keys.(core.StaticKeys)
	if !ok || len(keys) != 1 || !bytes.Equal(keys[0].Secret, secret) {
		t.Errorf("Keys = %v, want the static key", opts.Keys)
	}
	if want := []string{"https://a.example", "https://b.example:8443"}; !reflect.DeepEqual(opts.AllowedOrigins, want) {
		t.Errorf("AllowedOrigins = %q, want %q", opts.AllowedOrigins, want)
	}
	if opts.Logger.Enabled(t.Context(), slog.LevelInfo) {
		t.Error("MCPFN_LOG_LEVEL=warn: info is enabled")
	}
}

func TestAuth(t *testing.T) {
	setenv(t, "MCPFN_AUTH_RESOURCE", "https://fn.example/mcp", "MCPFN_AUTH_ISSUER", "https://as.example", "MCPFN_LOG_LEVEL", "error")
	opts, err := gcfenv.Load()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := opts.Authenticator.(*auth.ProtectedResource); !ok {
		t.Fatalf("Authenticator = %T, want *auth.ProtectedResource", opts.Authenticator)
	}
	h, err := gcfenv.Handler(core.Implementation{Name: "t", Version: "1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h(rec, httptest.NewRequest(http.MethodPost, "https://fn.example/mcp", strings.NewReader(`{}`)))
	if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Header().Get("WWW-Authenticate"), "resource_metadata=") {
		t.Errorf("no token: %d %v", rec.Code, rec.Header())
	}
}

func TestErrors(t *testing.T) {
	_, short := mcptest.RandomKey(31)
	for name, c := range map[string]struct {
		kv   []string
		name string
	}{
		"short key":          {[]string{"MCPFN_STATE_KEY", short}, "MCPFN_STATE_KEY"},
		"not base64":         {[]string{"MCPFN_STATE_KEY", "%%%"}, "MCPFN_STATE_KEY"},
		"bad level":          {[]string{"MCPFN_LOG_LEVEL", "loud"}, "MCPFN_LOG_LEVEL"},
		"bad format":         {[]string{"MCPFN_LOG_FORMAT", "xml"}, "MCPFN_LOG_FORMAT"},
		"bad origin":         {[]string{"MCPFN_ALLOWED_ORIGINS", "ftp://a.example"}, "MCPFN_ALLOWED_ORIGINS"},
		"resource no issuer": {[]string{"MCPFN_AUTH_RESOURCE", "https://fn.example/mcp"}, "MCPFN_AUTH_ISSUER"},
		"scopes no resource": {[]string{"MCPFN_AUTH_SCOPES", "mcp"}, "MCPFN_AUTH_RESOURCE"},
		"a Lambda table":     {[]string{"MCPFN_DYNAMODB_TABLE", "sessions"}, "MCPFN_DYNAMODB_TABLE"},
		"a Lambda secret":    {[]string{"MCPFN_KEYS_SECRET_ID", "keys"}, "MCPFN_KEYS_SECRET_ID"},
		"Lambda streaming":   {[]string{"MCPFN_STREAMING", "1"}, "MCPFN_STREAMING"},
		"Lambda task runner": {[]string{"MCPFN_TASK_RUNNER", "lambda"}, "MCPFN_TASK_RUNNER"},
		"bad instances":      {[]string{"MCPFN_MAX_INSTANCES", "one"}, "MCPFN_MAX_INSTANCES"},
		"negative instances": {[]string{"MCPFN_MAX_INSTANCES", "-1"}, "MCPFN_MAX_INSTANCES"},
		"bad claim timeout":  {[]string{"MCPFN_TASK_CLAIM_TIMEOUT", "soon"}, "MCPFN_TASK_CLAIM_TIMEOUT"},
		"zero claim timeout": {[]string{"MCPFN_TASK_CLAIM_TIMEOUT", "0s"}, "MCPFN_TASK_CLAIM_TIMEOUT"},
	} {
		t.Run(name, func(t *testing.T) {
			setenv(t, c.kv...)
			if opts, err := gcfenv.Load(); err == nil {
				t.Errorf("Load() = %+v, want an error", opts)
			} else if !strings.Contains(err.Error(), c.name) {
				t.Errorf("error %q does not name %s", err, c.name)
			}
			if _, err := gcfenv.Handler(core.Implementation{Name: "t", Version: "1"}, nil); err == nil {
				t.Error("Handler: no error")
			}
		})
	}
}

// TestKeyRotation: MCPFN_STATE_KEY lists keys, the first sealing and all
// opening. A state sealed by an instance with the old key opens on one
// that lists both (the rotation's first step), and one sealed by an
// instance with the new key first opens on it too; a state of a removed
// key is rejected with the invalid-state error, its key id logged.
func TestKeyRotation(t *testing.T) {
	_, oldKey := mcptest.RandomKey(32)
	_, newKey := mcptest.RandomKey(32)
	server := func(keys string) http.HandlerFunc {
		t.Setenv("MCPFN_STATE_KEY", keys)
		t.Setenv("MCPFN_LOG_LEVEL", "error")
		h, err := gcfenv.Handler(core.Implementation{Name: "rot", Version: "1"}, func(s *core.Server) {
			core.AddTool(s, &core.Tool{Name: "confirm", Description: "Asks first."},
				func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
					if _, ok := req.Input.Elicitation("ok"); !ok {
						return "", core.InputRequired(core.InputRequests{"ok": core.ElicitForm("Sure?", map[string]any{"type": "object", "properties": map[string]any{}})}, "step-1")
					}
					return "state " + req.Input.State(), nil
				})
		})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	setenv(t)
	oldOnly, both, newFirst, newOnly := server(oldKey), server(oldKey+","+newKey), server(newKey+", "+oldKey), server(newKey)
	ts := func(h http.Handler) string {
		s := httptest.NewServer(h)
		t.Cleanup(s.Close)
		return s.URL
	}
	caps := map[string]any{"elicitation": map[string]any{}}
	seal := func(url string) string {
		res, err := (&mcptest.Client{URL: url, Caps: caps}).Call(t.Context(), "tools/call", map[string]any{"name": "confirm", "arguments": map[string]any{}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var first struct{ RequestState string }
		if err := res.Decode(&first); err != nil || first.RequestState == "" {
			t.Fatalf("first round: %v %s", err, res.Result)
		}
		return first.RequestState
	}
	open := func(url, state string) *mcptest.Response {
		res, err := (&mcptest.Client{URL: url, Caps: caps}).Call(t.Context(), "tools/call", map[string]any{"name": "confirm", "arguments": map[string]any{},
			"inputResponses": map[string]any{"ok": map[string]any{"action": "accept", "content": map[string]any{}}},
			"requestState":   state}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	urls := map[string]string{"old": ts(oldOnly), "both": ts(both), "newFirst": ts(newFirst), "new": ts(newOnly)}
	for _, c := range []struct{ sealer, opener string }{{"old", "both"}, {"both", "newFirst"}, {"newFirst", "both"}, {"newFirst", "new"}} {
		if res := open(urls[c.opener], seal(urls[c.sealer])); !bytes.Contains(res.Result, []byte("state step-1")) {
			t.Errorf("sealed by %s, opened by %s: %s %+v", c.sealer, c.opener, res.Result, res.Error)
		}
	}
	if res := open(urls["new"], seal(urls["old"])); res.Error == nil || res.Error.Code != -32602 || res.Error.Message != "Invalid or expired requestState" {
		t.Errorf("a state of a removed key: %s %+v, want -32602 Invalid or expired requestState", res.Result, res.Error)
	}
	t.Setenv("MCPFN_STATE_KEY", oldKey+","+oldKey)
	if _, err := gcfenv.Load(); err == nil || !strings.Contains(err.Error(), "MCPFN_STATE_KEY") {
		t.Errorf("a key listed twice: %v", err)
	}
}
