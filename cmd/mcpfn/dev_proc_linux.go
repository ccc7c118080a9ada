package main

import "syscall"

// devDeathSignal makes the kernel kill the process if mcpfn dies without
// stopping it (SIGKILL, a crash).
func devDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
