package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/test/internal/taskwire"
	"github.com/mcpfn/mcpfn/test/replicas/storeproxy"
)

// logWatch is a log destination that counts the lines containing a
// pattern and signals when the count reaches a goal.
type logWatch struct {
	pattern string
	goal    int
	reached chan struct{}

	mu   sync.Mutex
	part []byte
	n    int
}

func newLogWatch(pattern string, goal int) *logWatch {
	return &logWatch{pattern: pattern, goal: goal, reached: make(chan struct{})}
}

func (w *logWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.part = append(w.part, p...)
	for {
		i := bytes.IndexByte(w.part, '\n')
		if i < 0 {
			break
		}
		if strings.Contains(string(w.part[:i]), w.pattern) {
			if w.n++; w.n == w.goal {
				close(w.reached)
			}
		}
		w.part = w.part[i+1:]
	}
	return len(p), nil
}

func (w *logWatch) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// claimed returns a channel closed once the store proxy forwards a write
// of task id's record with a runner (the run's claim or a later write).
func claimed(c *Cluster, id string) <-chan struct{} {
	ch := make(chan struct{})
	var once sync.Once
	c.Store.Observe(func(r storeproxy.Request) {
		if r.Op == "UpdateItem" && !r.Refused && bytes.Contains(r.Body, []byte(id)) && recordHas(r.Body, `"rn":"`) {
			once.Do(func() { close(ch) })
		}
	})
	return ch
}

// recordHas reports whether a DynamoDB request body carries, in one of
// its binary attribute values (a task item's record), the text s.
func recordHas(body []byte, s string) bool {
	var req map[string]any
	if json.Unmarshal(body, &req) != nil {
		return false
	}
	found := false
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if b, ok := e.(string); ok && k == "B" {
					if raw, err := base64.StdEncoding.DecodeString(b); err == nil && strings.Contains(string(raw), s) {
						found = true
					}
				}
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(req)
	return found
}

// TestTaskSurvivesStoreOutage: DynamoDB becomes unreachable (the store
// proxy resets every connection) at the two moments a run must write:
//
//   - right after the task is created, before its run has claimed it: the
//     claim is tried again with growing pauses, and the task runs once the
//     store is back (a failed claim used to end the run at once, leaving
//     the task to fail unclaimed);
//   - while the task runs, and until after its handler returned: the
//     replica keeps trying to store the result within the run's lease,
//     and once the store is back the task is completed with its result,
//     not failed as "runner stopped" a lease later (a client would call
//     the tool again and repeat its effects).
//
// The outages end on events (the replica's log says it is trying again),
// not after a sleep.
func TestTaskSurvivesStoreOutage(t *testing.T) {
	t.Parallel()
	// Seven retries: some 5 s of growing pauses (50 ms doubling to 2 s).
	claims := newLogWatch("task not claimed yet", 7)
	finishes := newLogWatch("task outcome not stored yet", 8)
	c := newClusterWith(t, Config{Replicas: 1, StoreProxy: true, Log: io.MultiWriter(claims, finishes)})
	a := c.Replica(0).URL
	outage := func(what string, w *logWatch) {
		t.Helper()
		cut := time.Now()
		select {
		case <-w.reached:
		case <-time.After(30 * time.Second):
			t.Errorf("%s: the run did not try again: %d retries logged in 30 s of outage (refused store calls: %v)",
				what, w.count(), c.Store.Refused())
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		}
		c.Store.Restore()
		t.Logf("%s: store cut for %v; refused calls so far %v; retries logged %d", what, time.Since(cut).Round(100*time.Millisecond), c.Store.Refused(), w.count())
	}

	// The claim. The run claims its task (an UpdateItem; the creation
	// is a PutItem) as soon as it starts, which may be before the store is
	// cut: then the claim went through and the outage would test nothing,
	// so the test lets that task finish and creates another. The proxy
	// counts a forwarded request under the lock Cut takes, so the count
	// read after Cut is exact.
	var id string
	for attempt := 1; ; attempt++ {
		before := c.Store.Counts()["UpdateItem"]
		id = createTask(t, a, "slow_compute", map[string]any{"seconds": 0.5, "label": "claim"})
		c.Store.Cut()
		if c.Store.Counts()["UpdateItem"] == before {
			break
		}
		c.Store.Restore()
		if attempt == 5 {
			t.Fatal("the run claimed its task before the store could be cut, five times")
		}
		waitTask(t, []string{a}, id, 60*time.Second, func(tk *taskwire.Task) bool { return terminal(tk.Status) })
	}
	outage("claim", claims)
	tk, _ := waitTask(t, []string{a}, id, 60*time.Second, func(tk *taskwire.Task) bool { return terminal(tk.Status) })
	if tk.Status != "completed" || !strings.Contains(tk.Text(), "claim") {
		t.Fatalf("task cut off before its claim: %+v (%q), want completed", tk, tk.Text())
	}

	// The outcome.
	id = createTask(t, a, "slow_compute", map[string]any{"seconds": 2, "label": "outcome"})
	select {
	case <-claimed(c, id):
	case <-time.After(30 * time.Second):
		t.Fatal("the run's claim never reached the store")
	}
	c.Store.Cut() // the handler returns about 2 s from now
	outage("outcome", finishes)
	tk, _ = waitTask(t, []string{a}, id, 60*time.Second, func(tk *taskwire.Task) bool { return terminal(tk.Status) })
	if tk.Status != "completed" || !strings.Contains(tk.Text(), "outcome") {
		t.Fatalf("task after the outage: %+v (%q), want completed with its result", tk, tk.Text())
	}
}
