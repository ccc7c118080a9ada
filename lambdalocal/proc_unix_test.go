//go:build unix

package lambdalocal_test

import (
	"errors"
	"strconv"
	"syscall"
	"testing"

	"github.com/mcpfn/mcpfn/lambdalocal"
)

// TestCloseStopsProcesses checks that Close leaves no process of the
// function running.
func TestCloseStopsProcesses(t *testing.T) {
	t.Parallel()
	fn, _ := newFunction(t, lambdalocal.Config{Sandboxes: 2})
	base := serve(t, fn, lambdalocal.Auto)
	_, body := get(t, base+"/pid")
	pid, err := strconv.Atoi(body)
	if err != nil {
		t.Fatalf("/pid answered %q", body)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the function's process %d is not running: %v", pid, err)
	}
	fn.Close()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("after Close, signalling the function's process %d: %v, want ESRCH", pid, err)
	}
}
