package main

import (
	"os/exec"
	"syscall"
)

// setDeathSignal makes the kernel send sig to the child when this process
// dies without cleaning up (killed with SIGKILL, say), so that no replica,
// smfake or dynalite outlives the cluster.
func setDeathSignal(cmd *exec.Cmd, sig syscall.Signal) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: sig}
}
