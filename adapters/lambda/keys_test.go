package lambda_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/store/memory"
)

var testImpl = core.Implementation{Name: "keys-test", Version: "1.0.0"}

// warnings returns the lines of a text log at level WARN.
func warnings(log string) []string { return linesAt(log, "WARN") }

// errorLines returns the lines of a text log at level ERROR.
func errorLines(log string) []string { return linesAt(log, "ERROR") }

// linesAt returns the lines of a text log at level.
func linesAt(log, level string) []string {
	var out []string
	for l := range strings.Lines(log) {
		if strings.Contains(l, "level="+level) {
			out = append(out, l)
		}
	}
	return out
}

// TestPerProcessKeysWarning: wrapping a server that seals requestState with
// its own per-process key logs one warning, when the function is built (at
// init, not per invocation), naming the fixes; a server with shared keys
// gets none.
func TestPerProcessKeysWarning(t *testing.T) {
	t.Parallel()
	t.Run("per-process", func(t *testing.T) {
		t.Parallel()
		var logs mcptest.LogBuffer
		fn := lambda.Wrap(core.NewServer(testImpl, nil), &lambda.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		w := warnings(logs.String())
		if len(w) != 1 {
			t.Fatalf("Wrap logged %d warnings, want 1:\n%s", len(w), logs.String())
		}
		for _, want := range []string{"MCPFN_KEYS_SECRET_ID", "StaticKeys", "KeyProvider"} {
			if !strings.Contains(w[0], want) {
				t.Errorf("the warning does not name %s: %s", want, w[0])
			}
		}
		for range 3 {
			fn(context.Background(), urlGet)
		}
		if n := len(warnings(logs.String())); n != 1 {
			t.Errorf("after 3 invocations: %d warnings, want still 1", n)
		}
	})
	t.Run("shared", func(t *testing.T) {
		t.Parallel()
		var logs mcptest.LogBuffer
		srv := core.NewServer(testImpl, &core.ServerOptions{Keys: core.StaticKeys{core.NewRandomKey("shared")}})
		lambda.Wrap(srv, &lambda.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if w := warnings(logs.String()); len(w) != 0 {
			t.Errorf("a server with shared keys: %v", w)
		}
	})
	t.Run("not a core.Server", func(t *testing.T) {
		t.Parallel()
		var logs mcptest.LogBuffer
		lambda.Wrap(http.NotFoundHandler(), &lambda.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if w := warnings(logs.String()); len(w) != 0 {
			t.Errorf("a plain handler: %v", w)
		}
	})
}

// TestNilLoggerIsDefault checks that a function wrapped without a Logger
// logs through the server's logger, and that one of a plain handler logs
// through slog.Default(), rather than nowhere. It replaces the default
// logger, so it is not parallel.
func TestNilLoggerIsDefault(t *testing.T) {
	def := mcptest.DefaultLogs(t)
	var srvLog mcptest.LogBuffer

	lambda.Wrap(http.NotFoundHandler(), nil)(context.Background(), unknownSQS)
	if l := def.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "unrecognised event") {
		t.Errorf("a plain handler wrapped without a Logger did not warn through slog.Default():\n%q", l)
	}

	srv := core.NewServer(testImpl, &core.ServerOptions{Logger: slog.New(slog.NewTextHandler(&srvLog, nil))})
	lambda.Wrap(srv, nil)(context.Background(), unknownSQS)
	if l := srvLog.String(); !strings.Contains(l, "unrecognised event") || !strings.Contains(l, "MCPFN_KEYS_SECRET_ID") {
		t.Errorf("a server wrapped without a Logger did not log through the server's logger:\n%q", l)
	}
}

// TestStreamingMismatch: a function built with Streaming that receives the
// events of an integration that cannot stream (HTTP APIs, load balancers)
// answers them buffered, correctly, and says once per integration that the
// Streaming option does not apply there; a Function URL event, or a
// function built without Streaming, logs nothing.
func TestStreamingMismatch(t *testing.T) {
	t.Parallel()
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	for name, c := range map[string]struct {
		streaming bool
		events    [][]byte
		want      []string // the integrations named, one warning each
	}{
		"http api":          {true, [][]byte{apigwV2Get, apigwV2Post, apigwV2Get}, []string{"HTTP API"}},
		"load balancer":     {true, [][]byte{albSingle, albMulti}, []string{"load balancer"}},
		"both":              {true, [][]byte{albSingle, apigwV2Get, albSingle, apigwV2Get}, []string{"load balancer", "HTTP API"}},
		"function url":      {true, [][]byte{urlGet, urlPost}, nil},
		"buffered http api": {false, [][]byte{apigwV2Get, albSingle, urlGet}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var logs mcptest.LogBuffer
			fn := lambda.Wrap(ok, &lambda.Options{Streaming: c.streaming, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			for _, ev := range c.events {
				res, _ := fn(context.Background(), ev)
				if r := readResponse(t, res); r.Status != http.StatusOK || r.Body != "ok" {
					t.Errorf("answer %+v, want 200 ok", r)
				}
			}
			w := warnings(logs.String())
			if len(w) != len(c.want) {
				t.Fatalf("%d warnings, want %d:\n%s", len(w), len(c.want), logs.String())
			}
			for i, integration := range c.want {
				for _, s := range []string{"Streaming", integration, "buffered", "MCPFN_STREAMING"} {
					if !strings.Contains(w[i], s) {
						t.Errorf("warning %d does not say %q: %s", i, s, w[i])
					}
				}
			}
		})
	}
}

// TestPerProcessTasksError: wrapping a server with task tools whose tasks
// would run in the invocation that created them (no TaskRunner: Lambda
// freezes the sandbox after the response), or live in the instance's
// memory (no TaskStore: another instance finds no task), logs one error
// at init, naming the fixes; a server with a shared store and another
// runner, or with no task tools, gets none.
func TestPerProcessTasksError(t *testing.T) {
	t.Parallel()
	taskTool := func(s *core.Server) *core.Server {
		core.AddTool(s, &core.Tool{Name: "job"}, func(context.Context, *core.CallToolRequest, struct{}) (string, error) { return "", nil },
			&core.ToolOptions{TaskSupport: core.TaskRequired})
		return s
	}
	keys := core.StaticKeys{core.NewRandomKey("shared")}
	for name, c := range map[string]struct {
		srv  *core.Server
		want []string // nil: no error
	}{
		"in-process runner": {taskTool(core.NewServer(testImpl, &core.ServerOptions{Keys: keys, TaskStore: &memory.TaskStore{}})),
			[]string{"freezes", "MCPFN_TASK_RUNNER=lambda", "MCPFN_DYNAMODB_TABLE", "tasks = true", "taskrunner"}},
		"per-process store": {taskTool(core.NewServer(testImpl, &core.ServerOptions{Keys: keys, TaskRunner: queueRunner(make(chan string, 1))})),
			[]string{"memory", "instances", "MCPFN_DYNAMODB_TABLE", "TaskStore"}},
		"both": {taskTool(core.NewServer(testImpl, &core.ServerOptions{Keys: keys})),
			[]string{"freezes", "MCPFN_TASK_RUNNER=lambda", "MCPFN_DYNAMODB_TABLE", "TaskStore"}},
		"shared": {taskTool(core.NewServer(testImpl, &core.ServerOptions{Keys: keys, TaskStore: &memory.TaskStore{},
			TaskRunner: queueRunner(make(chan string, 1))})), nil},
		"no task tools": {core.NewServer(testImpl, &core.ServerOptions{Keys: keys}), nil},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var logs mcptest.LogBuffer
			fn := lambda.Wrap(c.srv, &lambda.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			for range 3 {
				fn(context.Background(), urlGet)
			}
			errs := errorLines(logs.String())
			if c.want == nil {
				if len(errs) != 0 {
					t.Errorf("Wrap logged errors:\n%s", logs.String())
				}
				return
			}
			if len(errs) != 1 {
				t.Fatalf("Wrap and 3 invocations logged %d errors, want 1:\n%s", len(errs), logs.String())
			}
			for _, want := range c.want {
				if !strings.Contains(errs[0], want) {
					t.Errorf("the error does not name %s: %s", want, errs[0])
				}
			}
		})
	}
}
