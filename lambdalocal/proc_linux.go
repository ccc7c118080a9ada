package lambdalocal

import "syscall"

// setDeathSignal makes the kernel kill the process if the one that
// started it dies without cleaning up.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
