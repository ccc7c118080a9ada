package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/mcp"
)

// The extension's examples (ext-tasks specification/draft/tasks.md) decode
// into the wire types, and the types encode what the spec requires.
func TestTaskWireTypes(t *testing.T) {
	t.Parallel()
	var g mcp.GetTaskResult
	in := `{"resultType":"complete","taskId":"786512e2","status":"input_required","createdAt":"2025-11-25T10:30:00Z",
	"lastUpdatedAt":"2025-11-25T10:50:00Z","ttlMs":3600000,"pollIntervalMs":5000,
	"inputRequests":{"name":{"method":"elicitation/create","params":{"mode":"form","message":"Please enter your name."}}}}`
	if err := json.Unmarshal([]byte(in), &g); err != nil {
		t.Fatal(err)
	}
	if g.ResultType != mcp.ResultTypeComplete || g.TaskID != "786512e2" || g.Status != mcp.TaskInputRequired ||
		*g.TTLMs != 3600000 || *g.PollIntervalMs != 5000 || g.InputRequests["name"].Method != mcp.MethodElicit {
		t.Fatalf("decoded %+v", g)
	}
	var f mcp.GetTaskResult
	if err := json.Unmarshal([]byte(`{"resultType":"complete","taskId":"x","status":"failed","createdAt":"a","lastUpdatedAt":"b","ttlMs":null,
		"error":{"code":-32603,"message":"API rate limit exceeded"}}`), &f); err != nil {
		t.Fatal(err)
	}
	if f.TTLMs != nil || f.Error == nil || f.Error.Code != -32603 || !f.Status.Terminal() || mcp.TaskInputRequired.Terminal() {
		t.Fatalf("failed task decoded %+v", f)
	}
	// ttlMs is always sent (null for unlimited); requestState never exists.
	b, err := json.Marshal(mcp.CreateTaskResult{ResultType: mcp.ResultTypeTask, Task: mcp.Task{TaskID: "t", Status: mcp.TaskWorking, CreatedAt: "a", LastUpdatedAt: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != `{"resultType":"task","taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"b","ttlMs":null}` {
		t.Fatalf("CreateTaskResult = %s", got)
	}
	var sf mcp.SubscriptionFilter
	if err := json.Unmarshal([]byte(`{"taskIds":["a","b"]}`), &sf); err != nil || strings.Join(sf.TaskIDs, ",") != "a,b" {
		t.Fatalf("taskIds: %v %v", sf, err)
	}
}
