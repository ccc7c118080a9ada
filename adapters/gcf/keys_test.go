package gcf_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/adapters/gcf"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/store/memory"
)

var keysImpl = core.Implementation{Name: "keys-test", Version: "1.0.0"}

// TestPerProcessKeysWarning: a Cloud Function serving a server that seals
// requestState with its own per-process key logs one warning, when the
// function is built (at init, not per request), through the server's
// logger, naming the fixes; a server with shared keys gets none.
func TestPerProcessKeysWarning(t *testing.T) {
	t.Parallel()
	warnings := func(log string) (out []string) {
		for l := range strings.Lines(log) {
			if strings.Contains(l, "level=WARN") {
				out = append(out, l)
			}
		}
		return out
	}
	t.Run("per-process", func(t *testing.T) {
		t.Parallel()
		var logs mcptest.LogBuffer
		fn := gcf.Handler(core.NewServer(keysImpl, &core.ServerOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))}))
		w := warnings(logs.String())
		if len(w) != 1 {
			t.Fatalf("Handler logged %d warnings, want 1:\n%s", len(w), logs.String())
		}
		for _, want := range []string{"MCPFN_STATE_KEY", "StaticKeys", "KeyProvider", "instances"} {
			if !strings.Contains(w[0], want) {
				t.Errorf("the warning does not name %s: %s", want, w[0])
			}
		}
		for range 3 {
			fn(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
		}
		if n := len(warnings(logs.String())); n != 1 {
			t.Errorf("after 3 requests: %d warnings, want still 1", n)
		}
	})
	t.Run("shared", func(t *testing.T) {
		t.Parallel()
		var logs mcptest.LogBuffer
		gcf.Handler(core.NewServer(keysImpl, &core.ServerOptions{Keys: core.StaticKeys{core.NewRandomKey("shared")},
			Logger: slog.New(slog.NewTextHandler(&logs, nil))}))
		if w := warnings(logs.String()); len(w) != 0 {
			t.Errorf("a server with shared keys: %v", w)
		}
	})
}

// TestPerProcessTasksWarning: a Cloud Function serving a server with task
// tools whose tasks live in the instance's memory (no TaskStore) logs one
// warning at init naming the fixes, since a poll that reaches another
// instance finds no task; a shared store, or no task tools, gets none.
func TestPerProcessTasksWarning(t *testing.T) {
	t.Parallel()
	taskTool := func(s *core.Server) *core.Server {
		core.AddTool(s, &core.Tool{Name: "job"}, func(context.Context, *core.CallToolRequest, struct{}) (string, error) { return "", nil },
			&core.ToolOptions{TaskSupport: core.TaskOptional})
		return s
	}
	keys := core.StaticKeys{core.NewRandomKey("shared")}
	for name, c := range map[string]struct {
		opts  core.ServerOptions
		tasks bool
		warn  bool
	}{
		"per-process":   {core.ServerOptions{Keys: keys}, true, true},
		"shared store":  {core.ServerOptions{Keys: keys, TaskStore: &memory.TaskStore{}}, true, false},
		"no task tools": {core.ServerOptions{Keys: keys}, false, false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var logs mcptest.LogBuffer
			c.opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			srv := core.NewServer(keysImpl, &c.opts)
			if c.tasks {
				taskTool(srv)
			}
			fn := gcf.Handler(srv)
			for range 3 {
				fn(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
			}
			var w []string
			for l := range strings.Lines(logs.String()) {
				if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
					w = append(w, l)
				}
			}
			if !c.warn {
				if len(w) != 0 {
					t.Errorf("Handler logged:\n%s", logs.String())
				}
				return
			}
			if len(w) != 1 || !strings.Contains(w[0], "level=WARN") {
				t.Fatalf("Handler and 3 requests logged %d warnings, want 1:\n%s", len(w), logs.String())
			}
			for _, want := range []string{"memory", "instances", "-32602", "TaskStore", "MCPFN_MAX_INSTANCES=1", "max_instance_count = 1"} {
				if !strings.Contains(w[0], want) {
					t.Errorf("the warning does not name %s: %s", want, w[0])
				}
			}
		})
	}
}
