package workers_test

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/test/workers/workerdtest"
)

// A change made in one Go instance reaches a listen stream held by
// another through the change log in Durable Objects (durable.Changes, set
// by workers.ServerOptions), once; with one Go instance per isolate the
// stream hears of it at once, also once (the instance skips its own
// changes on the log).
func TestChangesAcrossGoInstances(t *testing.T) {
	for _, mode := range []string{"request", ""} {
		name := "fresh instance per request"
		if mode == "" {
			name = "one instance per isolate"
		}
		t.Run(name, func(t *testing.T) {
			bindings := map[string]string{"MCPFN_STATE_KEY": testKey}
			if mode != "" {
				bindings["MCPFN_GO_INSTANCE"] = mode
			}
			dir := workerdtest.Package(t, "./test/workers/changeserver")
			w := workerdtest.Start(t, dir, bindings)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			body := `{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["test://r"]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
			req, _ := http.NewRequestWithContext(ctx, "POST", w.URL+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", "subscriptions/listen")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			events := make(chan string, 16)
			go func() {
				defer close(events)
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
						events <- d
					}
				}
			}()
			next := func(limit time.Duration) (string, bool) {
				select {
				case ev, ok := <-events:
					return ev, ok
				case <-time.After(limit):
					return "", false
				}
			}
			if ev, _ := next(30 * time.Second); !strings.Contains(ev, "notifications/subscriptions/acknowledged") {
				t.Fatalf("first event %q, want the acknowledgement; logs:\n%s", ev, w.Logs())
			}
			bound := core.DefaultChangePollInterval + 10*time.Second
			for i := range 2 {
				start := time.Now()
				if got := result(t, post(t, w, "touch", map[string]any{}, nil)); !bytes.Contains(got, []byte("touched")) {
					t.Fatalf("touch: %s", got)
				}
				ev, ok := next(bound)
				if !ok || !strings.Contains(ev, `"notifications/resources/updated"`) || !strings.Contains(ev, `"test://r"`) {
					t.Fatalf("change %d: %q, want the update of test://r; logs:\n%s", i, ev, w.Logs())
				}
				t.Logf("change %d reached the stream after %v", i, time.Since(start).Round(time.Millisecond))
			}
			// Nothing twice: three poll intervals pass with no event.
			if ev, ok := next(3 * core.DefaultChangePollInterval); ok {
				t.Fatalf("an event after the changes: %q", ev)
			}
			for _, s := range crossContext {
				if strings.Contains(w.Logs(), s) {
					t.Errorf("workerd reported %q:\n%s", s, w.Logs())
				}
			}
		})
	}
}
