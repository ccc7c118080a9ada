//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// devProcAttr puts a process mcpfn dev starts in a process group of its
// own, so that stopping it stops what it started (the go command's
// compilers, npx's node and workerd): Ctrl-C reaches mcpfn, which stops
// every group.
func devProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	devDeathSignal(cmd.SysProcAttr)
}

// devSignalGroup sends sig (term: SIGTERM, else SIGKILL) to the process
// group of a started cmd.
func devSignalGroup(cmd *exec.Cmd, term bool) {
	if cmd.Process == nil {
		return
	}
	sig := syscall.SIGKILL
	if term {
		sig = syscall.SIGTERM
	}
	syscall.Kill(-cmd.Process.Pid, sig)
}
