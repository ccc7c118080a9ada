package lambda_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/core"
)

// taskHandler is an http.Handler that runs tasks, recording the ids it was
// asked to run and the deadline of each run's context.
type taskHandler struct {
	http.Handler
	err error

	mu        sync.Mutex
	ids       []string
	deadlines []time.Time
}

func (h *taskHandler) RunTask(ctx context.Context, id string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ids = append(h.ids, id)
	dl, _ := ctx.Deadline()
	h.deadlines = append(h.deadlines, dl)
	return h.err
}

func (h *taskHandler) ran() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.ids...)
}

func newTaskHandler() *taskHandler {
	return &taskHandler{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		io.Copy(w, r.Body)
	})}
}

func TestTaskEvent(t *testing.T) {
	t.Parallel()
	b, err := lambda.TaskEvent("0f9c2a71-2b1d-4a3e-9d7e-1c2b3a4d5e6f")
	if err != nil || string(b) != `{"mcpfnTask":{"taskId":"0f9c2a71-2b1d-4a3e-9d7e-1c2b3a4d5e6f"}}` {
		t.Fatalf("TaskEvent = %s, %v", b, err)
	}
	for _, id := range []string{"", strings.Repeat("a", lambda.MaxTaskIDLen+1), "a b", "a\"b\x00", "tâche"} {
		if _, err := lambda.TaskEvent(id); err == nil {
			t.Errorf("TaskEvent(%q): no error", id)
		}
	}
	if _, err := lambda.TaskEvent(strings.Repeat("a", lambda.MaxTaskIDLen)); err != nil {
		t.Errorf("id of MaxTaskIDLen bytes: %v", err)
	}
}

// TestWrapTaskEvent: a task event is handed to the server, with its id.
func TestWrapTaskEvent(t *testing.T) {
	t.Parallel()
	h := newTaskHandler()
	fn := lambda.Wrap(h, &lambda.Options{Logger: slog.New(slog.DiscardHandler)})
	payload, _ := lambda.TaskEvent("task-1")
	for _, streaming := range []bool{false, true} {
		fn := fn
		if streaming {
			fn = lambda.Wrap(h, &lambda.Options{Streaming: true, Logger: slog.New(slog.DiscardHandler)})
		}
		v, err := fn(context.Background(), payload)
		if err != nil {
			t.Fatal(err)
		}
		if a, ok := v.(lambda.TaskAnswer); !ok || a.TaskID != "task-1" || a.Error != "" {
			t.Errorf("streaming=%v: answer %#v", streaming, v)
		}
	}
	if got := h.ran(); len(got) != 2 || got[0] != "task-1" || got[1] != "task-1" {
		t.Errorf("ran %q", got)
	}
}

// TestWrapTaskEventRefused: only the exact task event shape runs a task. An
// HTTP event carrying the key (which no AWS integration sends), a body or a
// header holding a task event (what a caller of a Function URL controls),
// and every malformed variant are refused without reaching the server.
func TestWrapTaskEventRefused(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	h := newTaskHandler()
	fn := lambda.Wrap(h, &lambda.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	taskInBody, _ := json.Marshal(map[string]any{
		"version": "2.0", "rawPath": "/mcp", "headers": map[string]string{"x-task": `{"mcpfnTask":{"taskId":"t"}}`},
		"requestContext": map[string]any{"domainName": "abc.lambda-url.us-east-1.on.aws", "http": map[string]string{"method": "POST"}},
		"body":           `{"mcpfnTask":{"taskId":"t"}}`,
	})
	v, err := fn(context.Background(), taskInBody)
	if err != nil {
		t.Fatal(err)
	}
	if r := readResponse(t, v); r.Status != http.StatusTeapot || r.Body != `{"mcpfnTask":{"taskId":"t"}}` {
		t.Errorf("Function URL event with a task event as its body: %+v", r)
	}

	for name, payload := range map[string]string{
		"url event with the key":  `{"version":"2.0","rawPath":"/","requestContext":{"domainName":"a.lambda-url.us-east-1.on.aws","http":{"method":"POST"}},"mcpfnTask":{"taskId":"t"}}`,
		"extra top-level key":     `{"mcpfnTask":{"taskId":"t"},"body":"x"}`,
		"extra task key":          `{"mcpfnTask":{"taskId":"t","principal":"admin"}}`,
		"null task":               `{"mcpfnTask":null}`,
		"empty task":              `{"mcpfnTask":{}}`,
		"id not a string":         `{"mcpfnTask":{"taskId":42}}`,
		"empty id":                `{"mcpfnTask":{"taskId":""}}`,
		"id too long":             `{"mcpfnTask":{"taskId":"` + strings.Repeat("x", lambda.MaxTaskIDLen+1) + `"}}`,
		"id with a space":         `{"mcpfnTask":{"taskId":"a b"}}`,
		"id with a control byte":  `{"mcpfnTask":{"taskId":"a\u0000b"}}`,
		"task not an object":      `{"mcpfnTask":"t"}`,
		"duplicate task object":   `{"mcpfnTask":{"taskId":"t"},"mcpfnTask":{"taskId":"u","x":1}}`,
		"task array":              `{"mcpfnTask":[{"taskId":"t"}]}`,
		"huge id":                 `{"mcpfnTask":{"taskId":"` + strings.Repeat("x", 1<<20) + `"}}`,
		"key in another case too": `{"mcpfnTask":{"taskId":"t"},"MCPFNTASK":{"taskId":"u"}}`,
	} {
		v, err := fn(context.Background(), []byte(payload))
		if err != nil {
			t.Errorf("%s: error %v", name, err)
			continue
		}
		if a, ok := v.(lambda.TaskAnswer); !ok || a.Error == "" {
			t.Errorf("%s: answer %#v, want a refusal", name, v)
		}
	}
	if got := h.ran(); len(got) != 0 {
		t.Errorf("refused events ran tasks %q", got)
	}
	if !strings.Contains(logs.String(), "refused a task event") {
		t.Errorf("refusals not logged:\n%s", logs.String())
	}
}

// TestWrapTaskEventNoRunner: a handler that runs no tasks refuses task
// events, and says so in the log.
func TestWrapTaskEventNoRunner(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	fn := lambda.Wrap(http.NotFoundHandler(), &lambda.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	payload, _ := lambda.TaskEvent("task-1")
	v, err := fn(context.Background(), payload)
	if a, ok := v.(lambda.TaskAnswer); err != nil || !ok || a.TaskID != "task-1" || a.Error == "" {
		t.Errorf("answer %#v, %v", v, err)
	}
	if !strings.Contains(logs.String(), "not a *core.Server") {
		t.Errorf("not logged:\n%s", logs.String())
	}
}

// TestWrapTaskEventError: an error of the server (the store could not be
// reached) is the invocation's error, which makes Lambda retry an
// asynchronous invocation.
func TestWrapTaskEventError(t *testing.T) {
	t.Parallel()
	h := newTaskHandler()
	h.err = errors.New("store unreachable")
	fn := lambda.Wrap(h, &lambda.Options{Logger: slog.New(slog.DiscardHandler)})
	payload, _ := lambda.TaskEvent("task-1")
	if _, err := fn(context.Background(), payload); err == nil || !strings.Contains(err.Error(), "store unreachable") {
		t.Errorf("error %v", err)
	}
}

// TestWrapTaskEventUnknown: a task the store does not hold is not an error
// (Lambda would retry the invocation for nothing).
func TestWrapTaskEventUnknown(t *testing.T) {
	t.Parallel()
	h := newTaskHandler()
	h.err = fmt.Errorf("claiming: %w", core.ErrTaskNotFound)
	fn := lambda.Wrap(h, &lambda.Options{Logger: slog.New(slog.DiscardHandler)})
	payload, _ := lambda.TaskEvent("task-1")
	v, err := fn(context.Background(), payload)
	if a, ok := v.(lambda.TaskAnswer); err != nil || !ok || a.TaskID != "task-1" || a.Error == "" {
		t.Errorf("answer %#v, %v", v, err)
	}
}

// TestWrapTaskDeadline: a task's context ends before the invocation's, so
// that its outcome is recorded before Lambda stops the function: two
// seconds before, or a quarter of the time left when that is shorter.
func TestWrapTaskDeadline(t *testing.T) {
	t.Parallel()
	h := newTaskHandler()
	fn := lambda.Wrap(h, &lambda.Options{Logger: slog.New(slog.DiscardHandler)})
	payload, _ := lambda.TaskEvent("task-1")
	for _, tc := range []struct{ left, margin time.Duration }{
		{60 * time.Second, 2 * time.Second},
		{4 * time.Second, time.Second},
	} {
		dl := time.Now().Add(tc.left)
		ctx, cancel := context.WithDeadline(context.Background(), dl)
		_, err := fn(ctx, payload)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		h.mu.Lock()
		got := h.deadlines[len(h.deadlines)-1]
		h.mu.Unlock()
		// The margin is taken from the time left when the task starts,
		// a little after dl was computed.
		if d := dl.Sub(got); d < tc.margin-50*time.Millisecond || d > tc.margin {
			t.Errorf("%v left: the task's context ends %v before the invocation's, want %v", tc.left, d, tc.margin)
		}
	}
	if _, err := fn(context.Background(), payload); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	got := h.deadlines[len(h.deadlines)-1]
	h.mu.Unlock()
	if !got.IsZero() {
		t.Errorf("no invocation deadline: the task's context has deadline %v", got)
	}
}
