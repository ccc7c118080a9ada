//go:build !linux

package main

import (
	"os/exec"
	"syscall"
)

// setDeathSignal does nothing outside Linux: the cluster still stops its
// children when it exits normally or on SIGINT/SIGTERM.
func setDeathSignal(*exec.Cmd, syscall.Signal) {}
