package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// taskServer answers the tool "job" with a task (the Tasks extension,
// SEP-2663) that asks for a name, then greets it; its statusMessage
// carries an escape sequence. The tool "forever" is a task that never
// ends.
func taskServer(t *testing.T) (string, func() (updates, cancels int)) {
	var mu sync.Mutex
	gets, updates, cancels := 0, 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name   string `json:"name"`
				TaskID string `json:"taskId"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		task := `"taskId":"T1","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":null,"pollIntervalMs":0`
		var res string
		switch m.Method {
		case "server/discover":
			res = `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
		case "tools/list":
			res = `{"tools":[{"name":"job","inputSchema":{"type":"object"}}]}`
		case "tools/call":
			if m.Params.Name == "forever" {
				task = strings.Replace(task, "T1", "T2", 1)
			}
			res = `{"resultType":"task","status":"working",` + task + `}`
		case "tasks/get":
			gets++
			switch {
			case m.Params.TaskID == "T2":
				res = `{"resultType":"complete","status":"working",` + strings.Replace(task, "T1", "T2", 1) + `}`
			case updates == 0:
				res = `{"resultType":"complete","status":"input_required","statusMessage":"waiting \u001b[31m","inputRequests":{"name":{"method":"elicitation/create","params":{"mode":"form","message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}},` + task + `}`
			default:
				res = `{"resultType":"complete","status":"completed","result":{"content":[{"type":"text","text":"Hello, Luca!"}]},` + task + `}`
			}
		case "tasks/update":
			updates++
			res = `{"resultType":"complete"}`
		case "tasks/cancel":
			cancels++
			res = `{"resultType":"complete"}`
		default:
			res = `{}`
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, res)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		return updates, cancels
	}
}

// TestCallTask: mcpfn call waits for a task, answering its elicitation
// (--answer), prints the task's result as the command's JSON document, and
// shows each status change on stderr, server text escaped.
func TestCallTask(t *testing.T) {
	t.Parallel()
	url, counts := taskServer(t)
	code, out, errs := mcpfn(t, "", "call", url, "job", "--answer", `{"name":"Luca"}`)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, `"Hello, Luca!"`) || strings.Contains(out, "taskId") {
		t.Fatalf("stdout %s, want the task's result", out)
	}
	want := "mcpfn: task T1: working\n" +
		"mcpfn: task T1: input_required: waiting \\x1b[31m\n" +
		"mcpfn: the server asks (form): name?\nmcpfn: answered accept (--answer)\n" +
		"mcpfn: task T1: completed\n"
	if !strings.Contains(errs, want) {
		t.Fatalf("stderr %q lacks the status changes %q", errs, want)
	}
	if updates, cancels := counts(); updates != 1 || cancels != 0 {
		t.Fatalf("%d tasks/update, %d tasks/cancel; want 1, 0", updates, cancels)
	}
}

// TestCallTaskTimeout: --timeout ends the wait for a task that never ends,
// and the task is cancelled with tasks/cancel.
func TestCallTaskTimeout(t *testing.T) {
	t.Parallel()
	url, counts := taskServer(t)
	code, _, errs := mcpfn(t, "", "call", url, "forever", "--timeout", "1s")
	if code != exitFailure || !strings.Contains(errs, "timed out after 1s") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if _, cancels := counts(); cancels != 1 {
		t.Fatalf("%d tasks/cancel, want 1", cancels)
	}
}
