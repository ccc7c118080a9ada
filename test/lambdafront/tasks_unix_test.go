//go:build unix

package main

import (
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestTaskFrozenSandbox: a sandbox frozen in the middle of a task (SIGSTOP:
// Lambda freezes a sandbox between invocations; here the invocation itself
// stops) stops renewing the task's lease; another sandbox reads the task as
// failed once the lease has passed. Thawed, the run learns it lost the task:
// its handler's context ends, the invocation returns, and the failure
// stays.
func TestTaskFrozenSandbox(t *testing.T) {
	const lease = 2 * time.Second
	r := startTaskRig(t, rigConfig{Runtime: RuntimeStream, Concurrency: 2,
		Env: append(dynamoEnv(t), "TASKFN_LEASE="+lease.String(), "TASKFN_POLL=200ms")})
	id := r.create("wait", map[string]any{})
	q := r.waitStarted()
	pid, err := strconv.Atoi(q.Get("pid"))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	thawed := false
	t.Cleanup(func() {
		if !thawed {
			syscall.Kill(pid, syscall.SIGCONT)
		}
	})
	failed, took := r.waitStatus(id, "failed", 3*lease)
	if failed.Error == nil {
		t.Fatalf("failed task without its error: %+v", failed)
	}
	t.Logf("failed %v after the freeze (lease %v): %s", took, lease, failed.Error.Message)
	if took > lease+time.Second {
		t.Errorf("failed %v after the freeze, want within the lease (%v) and a heartbeat", took, lease)
	}
	syscall.Kill(pid, syscall.SIGCONT)
	thawed = true
	d := r.delivery()
	if !d.Async || d.Err != nil {
		t.Fatalf("the thawed invocation: async=%v err=%v, want it to return", d.Async, d.Err)
	}
	if got := r.get(id); got.Status != "failed" || got.Error == nil || got.Error.Message != failed.Error.Message {
		t.Errorf("after the thaw: %+v, want the failure %+v", got, failed)
	}
}
