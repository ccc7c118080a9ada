package lambda_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
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
		r := readResponse(t, v)
		switch r.Status {
		case http.StatusTeapot, http.StatusBadRequest, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		default:
			t.Fatalf("status %d for payload %q", r.Status, payload)
		}
	})
}
