package client

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcpfn/mcpfn/mcp"
)

// FuzzDecodeTask: decodeTask, the parser of a server's CreateTaskResult
// and tasks/get results, either fails with ErrProtocol or returns a task
// that keeps what TaskHandle relies on: an id of 1 to maxTaskIDBytes (the
// one asked for), a known status, a result object when completed and an
// error when failed; the poll interval it implies stays within its bounds.
func FuzzDecodeTask(f *testing.F) {
	f.Add([]byte(`{"resultType":"task","taskId":"T","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":null,"pollIntervalMs":5000}`), false)
	f.Add([]byte(`{"resultType":"complete","taskId":"T","status":"completed","result":{"content":[]},"ttlMs":1,"pollIntervalMs":-1}`), true)
	f.Add([]byte(`{"taskId":"T","status":"failed","error":{"code":-32603,"message":"m"},"pollIntervalMs":1e300}`), true)
	f.Add([]byte(`{"taskId":"T","status":"input_required","inputRequests":{"a":{"method":"roots/list"}}}`), true)
	f.Fuzz(func(t *testing.T, b []byte, get bool) {
		if !json.Valid(b) {
			return // results reach decodeTask as part of a decoded message
		}
		want := ""
		if get {
			want = "T"
		}
		tk, err := decodeTask(b, want)
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if tk.TaskID == "" || len(tk.TaskID) > maxTaskIDBytes || (get && tk.TaskID != want) {
			t.Fatalf("task id %q", tk.TaskID)
		}
		switch tk.Status {
		case mcp.TaskWorking, mcp.TaskInputRequired, mcp.TaskCancelled:
		case mcp.TaskCompleted:
			if get && (len(tk.Result) == 0 || tk.Result[0] != '{') {
				t.Fatalf("completed without a result object: %s", tk.Result)
			}
		case mcp.TaskFailed:
			if get && tk.Error == nil {
				t.Fatal("failed without an error")
			}
		default:
			t.Fatalf("status %q", tk.Status)
		}
		if d := pollInterval(tk); d < MinTaskPollInterval || d > MaxTaskPollInterval {
			t.Fatalf("poll interval %v", d)
		}
	})
}
