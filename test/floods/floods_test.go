//go:build linux

package floods

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

var taskCaps = map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}

// callTask calls slow_compute as a task and returns the response.
func callTask(t *testing.T, c *mcptest.Client, seconds float64, label string) *mcptest.Response {
	t.Helper()
	res, err := c.Call(t.Context(), "tools/call", map[string]any{"name": "slow_compute",
		"arguments": map[string]any{"seconds": seconds, "label": label}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// createdTask returns the id of the task res created; it ends the test,
// naming the call what, when res is not a CreateTaskResult.
func createdTask(t *testing.T, res *mcptest.Response, what string) string {
	t.Helper()
	var created struct {
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
	}
	if err := res.Decode(&created); err != nil || created.ResultType != "task" {
		t.Fatalf("%s: HTTP %d %v %s", what, res.Status, err, res.Result)
	}
	return created.TaskID
}

// limitReason is data.reason of a CodeLimitExceeded answer sent with 429
// and Retry-After, or "" for any other answer.
func limitReason(res *mcptest.Response) string {
	if res.Error == nil || res.Error.Code != -31429 || res.Status != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		return ""
	}
	var d struct {
		Reason string `json:"reason"`
	}
	json.Unmarshal(res.Error.Data, &d)
	return d.Reason
}

// A flood of anonymous task calls with 200-380 KiB of arguments each (the
// anonymous pool admits 1,000 tasks kept for an hour): the server keeps
// at most its bound of task bytes, refuses the rest with CodeLimitExceeded
// (429, reason too_many_task_bytes), and its resident memory stays within
// a bound; without the bound 1,000 such tasks took it from 22 MB to
// 435-810 MB (729 MB in this test with 1,000 calls).
func TestAnonymousTaskFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("a flood of 120 MiB: not in -short")
	}
	t.Parallel()
	e := startEverything(t)
	c := &mcptest.Client{URL: e.URL, Caps: taskCaps}
	callTask(t, c, 0, "warm-up")
	before := e.rss(t)

	const calls, workers = 400, 8
	var accepted, refused, other atomic.Int64
	var sent atomic.Int64
	var wg sync.WaitGroup
	jobs := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				n := 200<<10 + rand.IntN(180<<10)
				label := strings.Repeat(string(rune('a'+i%26)), n)
				res := callTask(t, c, 0, label)
				sent.Add(int64(n))
				switch {
				case res.Error == nil:
					accepted.Add(1)
				case limitReason(res) == "too_many_task_bytes":
					refused.Add(1)
				default:
					other.Add(1)
					t.Errorf("call %d: HTTP %d %+v", i, res.Status, res.Error)
				}
			}
		})
	}
	peak := before
	for i := range calls {
		jobs <- i
		if i%50 == 0 {
			peak = max(peak, e.rss(t))
		}
	}
	close(jobs)
	wg.Wait()
	after := e.rss(t)
	peak = max(peak, after)
	t.Logf("%d calls (%d MiB of arguments): %d tasks accepted, %d refused; RSS %d MiB before, %d MiB after, %d MiB at the highest sample",
		calls, sent.Load()>>20, accepted.Load(), refused.Load(), before>>20, after>>20, peak>>20)
	// The anonymous bound is 16 MiB of arguments: some 55 of these tasks.
	if a := accepted.Load(); a < 40 || a > 85 {
		t.Errorf("%d tasks accepted, want those that fit in 16 MiB (about 55)", a)
	}
	if refused.Load()+accepted.Load() != calls {
		t.Errorf("%d calls answered otherwise", other.Load())
	}
	// What the tasks hold (16 MiB of arguments, as much in results) and
	// the garbage of a thousand refused 300 KiB bodies, well under the
	// hundreds of MiB the flood cost without the bound.
	if grew := peak - before; grew > 150<<20 {
		t.Errorf("resident memory grew by %d MiB during the flood (from %d MiB), want at most 150 MiB", grew>>20, before>>20)
	}
	// Other callers are served: a small anonymous call is refused too (the
	// pool is full), but the server answers everything else.
	if res, err := c.Call(t.Context(), "tools/list", nil, nil); err != nil || res.Error != nil {
		t.Fatalf("tools/list after the flood: %v %+v", err, res)
	}
}

// One principal starts long tasks by the dozen; another principal's task
// still starts and completes at once: the in-process runner gives each
// principal a quarter of its 64 workers and queues the rest. (Without the
// share, alice's 64 tasks took every worker and bob's call failed at once
// with -32603 "could not be started".) The callers authenticate with JWTs
// of a real authorization server on loopback, configured through the
// deploy kit's MCPFN_AUTH_* variables.
func TestOnePrincipalCannotTakeEveryWorker(t *testing.T) {
	t.Parallel()
	as := authtest.New(nil)
	t.Cleanup(as.Close)
	const resource = "http://127.0.0.1/mcp"
	e := startEverything(t, "MCPFN_AUTH_RESOURCE="+resource, "MCPFN_AUTH_ISSUER="+as.Issuer)
	client := func(sub string) *mcptest.Client {
		tok := as.Mint(authtest.Claims{Subject: sub, Audience: []string{resource}})
		return &mcptest.Client{URL: e.URL, Caps: taskCaps, Header: http.Header{"Authorization": {"Bearer " + tok}}}
	}
	alice, bob := client("alice"), client("bob")

	var ids []string
	for range 64 {
		ids = append(ids, createdTask(t, callTask(t, alice, 300, "alice"), "alice's call"))
	}
	bobTask := createdTask(t, callTask(t, bob, 0.1, "bob"), "bob's call while alice holds 64 tasks")
	// Poll bob's task at the pollIntervalMs the server gives (tasks.md
	// §Task Polling), within a bound.
	get := func(c *mcptest.Client, id string) (status string, poll time.Duration) {
		res, err := c.Call(t.Context(), "tasks/get", map[string]any{"taskId": id}, http.Header{"Mcp-Name": {id}})
		if err != nil || res.Error != nil {
			t.Fatalf("tasks/get: %v %+v", err, res)
		}
		var tk struct {
			Status         string `json:"status"`
			PollIntervalMs int    `json:"pollIntervalMs"`
		}
		json.Unmarshal(res.Result, &tk)
		return tk.Status, time.Duration(tk.PollIntervalMs) * time.Millisecond
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, poll := get(bob, bobTask)
		if st == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bob's 0.1 s task is %s after 60 s while alice's 64 tasks run", st)
		}
		select {
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-time.After(poll):
		}
	}
	for _, id := range ids {
		alice.Call(t.Context(), "tasks/cancel", map[string]any{"taskId": id}, http.Header{"Mcp-Name": {id}})
	}
}
