package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// TestTaskFloodAcrossReplicas: an anonymous client floods the fleet (three
// replicas behind the round-robin proxy, tasks in DynamoDB) with task calls
// of 200 KiB arguments each. However the calls spread over the replicas,
// the anonymous pool holds at most its bound of task bytes (16 MiB, counted
// in the store's task-count items beside the tasks: atomic across
// instances), and the rest are refused with -31429 (HTTP 429, reason
// too_many_task_bytes). Without a byte bound, the pool admitted 1,000 such
// tasks (some 200 MB of items for an hour).
func TestTaskFloodAcrossReplicas(t *testing.T) {
	t.Parallel()
	c := newClusterWith(t, Config{Replicas: 3, StoreProxy: true})
	label := strings.Repeat("x", 200<<10)
	const calls, workers = 120, 6
	var accepted, refused atomic.Int64
	var wg sync.WaitGroup
	jobs := make(chan int)
	for range workers {
		wg.Go(func() {
			cl := &mcptest.Client{URL: c.URL, Caps: taskCaps}
			for range jobs {
				res, err := cl.Call(t.Context(), "tools/call", map[string]any{"name": "slow_compute",
					"arguments": map[string]any{"seconds": 0, "label": label}}, nil)
				switch {
				case err != nil:
					t.Error(err)
				case res.Error == nil:
					accepted.Add(1)
				case res.Error.Code == -31429 && res.Status == http.StatusTooManyRequests && res.Header.Get("Retry-After") != "" &&
					strings.Contains(string(res.Error.Data), `"too_many_task_bytes"`):
					refused.Add(1)
				default:
					t.Errorf("HTTP %d %+v", res.Status, res.Error)
				}
			}
		})
	}
	for i := range calls {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	served := map[string]int{}
	for _, r := range c.Proxy.Records() {
		if r.RPCMethod == "tools/call" {
			served[r.Replica]++
		}
	}
	t.Logf("%d calls of 200 KiB through %d replicas %v: %d accepted, %d refused; store calls %v",
		calls, len(served), served, accepted.Load(), refused.Load(), c.Store.Counts())
	// 16 MiB in ten count items of 1.6 MiB (the anonymous bound of 1,000
	// tasks is sharded): eight tasks of 200 KiB per item, at most 80.
	if a := accepted.Load(); a == 0 || a > 80 {
		t.Errorf("%d tasks of 200 KiB accepted, want at most the 16 MiB bound (80)", a)
	}
	if accepted.Load()+refused.Load() != calls {
		t.Errorf("%d calls answered otherwise", calls-accepted.Load()-refused.Load())
	}
	if len(served) < 2 {
		t.Errorf("the calls reached %v: want several replicas", served)
	}
}

// TestHostileTaskIDsAcrossReplicas: a tasks/get naming a 3,000-byte id
// (any caller may send one) is answered as an unknown task (-32602) without
// reaching DynamoDB, whose 2,048-byte key limit used to turn it into -32603
// "task store unavailable" and an ERROR log line.
func TestHostileTaskIDsAcrossReplicas(t *testing.T) {
	t.Parallel()
	c := newClusterWith(t, Config{Replicas: 1, StoreProxy: true})
	before := c.Store.Counts()["GetItem"]
	for _, id := range []string{strings.Repeat("A", 3000), "abc/../def", "a b"} {
		res, err := (&mcptest.Client{URL: c.Replica(0).URL, Caps: taskCaps}).Call(t.Context(), "tasks/get",
			map[string]any{"taskId": id}, http.Header{"Mcp-Name": {mcptest.EncodeHeader(id)}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Error == nil || res.Error.Code != -32602 {
			b, _ := json.Marshal(res.Error)
			t.Errorf("tasks/get of a %d-byte id: HTTP %d %s, want -32602", len(id), res.Status, b)
		}
	}
	if n := c.Store.Counts()["GetItem"] - before; n != 0 {
		t.Errorf("hostile ids cost %d GetItem calls, want 0", n)
	}
}
