package lambda_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mcpfn/mcpfn/adapters/lambda"
)

// FuzzWrap feeds arbitrary payloads to a wrapped handler, buffered and
// streaming. Whatever arrives, the adapter must answer with an HTTP response
// of a Lambda shape and a status the handler or the adapter chose: never a
// panic, an error or a malformed response.
func FuzzWrap(f *testing.F) {
	seeds, err := filepath.Glob("testdata/*")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range seeds {
		if filepath.Ext(name) == ".md" {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
		f.Add(b, true)
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.WriteHeader(http.StatusTeapot)
		w.Write(b)
	})
	buffered := lambda.Wrap(handler, nil)
	streaming := lambda.Wrap(handler, &lambda.Options{Streaming: true})
	f.Fuzz(func(t *testing.T, payload []byte, stream bool) {
		if !json.Valid(payload) {
			// The Lambda runtime delivers JSON only; the adapter still
			// answers anything else with 400 (see TestWrap).
			payload, _ = json.Marshal(string(payload))
		}
		invoke := buffered
		if stream {
			invoke = streaming
		}
		v, err := invoke(context.Background(), payload)
		if err != nil {
			t.Fatalf("Wrap returned an error: %v", err)
		}
		if a, ok := v.(lambda.TaskAnswer); ok {
			// Routed as a task event: this handler runs no tasks.
			if a.Error == "" {
				t.Fatalf("task event %q accepted by a handler that runs no tasks", payload)
			}
			return
		}
		r := readResponse(t, v)
		switch r.Status {
		case http.StatusTeapot, http.StatusBadRequest, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		default:
			t.Fatalf("status %d for payload %q", r.Status, payload)
		}
	})
}

// FuzzTaskEvent feeds arbitrary payloads to a handler that runs tasks: a
// task runs only for a payload that is exactly a task event, with the id
// TaskEvent would encode; nothing else reaches the server.
func FuzzTaskEvent(f *testing.F) {
	for _, s := range []string{
		`{"mcpfnTask":{"taskId":"0f9c2a71-2b1d-4a3e-9d7e-1c2b3a4d5e6f"}}`,
		` { "mcpfnTask" : { "taskId" : "t" } } `,
		`{"mcpfnTask":{"taskId":"t"},"body":"x"}`,
		`{"mcpfnTask":{"taskId":"t","x":1}}`,
		`{"mcpfnTask":{"taskId":"a\u0020b"}}`,
		`{"MCPFNTASK":{"taskId":"t"}}`,
		`{"mcpfnTask":null}`,
	} {
		f.Add([]byte(s))
	}
	h := &taskHandler{Handler: http.NotFoundHandler()}
	fn := lambda.Wrap(h, &lambda.Options{Logger: slog.New(slog.DiscardHandler)})
	f.Fuzz(func(t *testing.T, payload []byte) {
		if !json.Valid(payload) {
			return // the Lambda runtime delivers JSON only
		}
		before := len(h.ran())
		v, err := fn(context.Background(), payload)
		if err != nil {
			t.Fatalf("Wrap returned an error: %v", err)
		}
		ran := h.ran()
		a, isTask := v.(lambda.TaskAnswer)
		if len(ran) == before {
			if isTask && a.Error == "" {
				t.Fatalf("payload %q: accepted, but no task ran", payload)
			}
			return
		}
		id := ran[len(ran)-1]
		if !isTask || a.Error != "" || a.TaskID != id {
			t.Fatalf("payload %q ran task %q, answer %#v", payload, id, v)
		}
		want, err := lambda.TaskEvent(id)
		if err != nil {
			t.Fatalf("payload %q ran task %q, which TaskEvent refuses: %v", payload, id, err)
		}
		var got, exp any
		json.Unmarshal(payload, &got)
		json.Unmarshal(want, &exp)
		if !reflect.DeepEqual(got, exp) {
			t.Fatalf("payload %q ran task %q but is not its task event %s", payload, id, want)
		}
	})
}
