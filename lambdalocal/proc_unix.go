//go:build unix

package lambdalocal

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the process in a process group of its own, so that
// stopping it stops what it started too.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
}

// killGroup kills the process group of a started cmd.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
