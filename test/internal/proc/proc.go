// Package proc handles the child processes of the test module's programs
// and tests: stopping one when its test ends, and finding the processes
// one has started.
package proc

import (
	"fmt"
	"os/exec"
	"testing"
)

// StopAtEnd kills the started cmd when the test ends and waits for it; if
// the test failed, it then logs output under the heading what ("workerd
// output").
func StopAtEnd(tb testing.TB, cmd *exec.Cmd, what string, output fmt.Stringer) {
	tb.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if tb.Failed() {
			tb.Logf("%s:\n%s", what, output)
		}
	})
}
