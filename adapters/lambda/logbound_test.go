package lambda_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/core"
)

// TestMalformedEventLogBounded: an event of 900 KiB whose field has the
// wrong type (a direct invocation: the platform's events are well formed)
// is refused with a 400 and a warning of a few hundred bytes: encoding/json
// names the field and the type, not the value, so the adapter's warning
// needs no bound of its own.
func TestMalformedEventLogBounded(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	fn := lambda.Wrap(core.NewServer(testImpl, &core.ServerOptions{Logger: slog.New(slog.DiscardHandler)}),
		&lambda.Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	payload := `{"version":1` + strings.Repeat("0", 900<<10) + `}`
	res, err := fn(context.Background(), json.RawMessage(payload))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(res); !strings.Contains(string(b), `"statusCode":400`) {
		t.Errorf("answer %.300s, want a 400", b)
	}
	var line string
	var rec map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("log line %.300s: %v", l, err)
		}
		if r["msg"] == "lambda: event is not a JSON object" {
			line, rec = l, r
		}
	}
	if rec == nil {
		t.Fatalf("no warning in %.600s", logs.String())
	}
	if msg, _ := rec["err"].(string); len(line) > 1<<10 || msg == "" {
		t.Errorf("a warning of %d bytes (at most 1 KiB) with err %.100q", len(line), msg)
	}
}
