package main

import (
	"os/exec"
	"syscall"
)

// setProcAttr makes the kernel kill the emulator if the front door dies
// without cleaning up.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

func killPID(pid int) { syscall.Kill(pid, syscall.SIGKILL) }
