package lambdalocal

import (
	"syscall"
	"unsafe"
)

// setDeathSignal makes the kernel kill the process if the one that
// started it dies without cleaning up.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// Arguments of waitid(2), which package syscall does not name.
const (
	pPID     = 1
	wStopped = 0x2
	wExited  = 0x4
	wNoWait  = 0x1000000
)

// stopPID stops pid (SIGSTOP), as Lambda freezes a sandbox, and returns
// once it is stopped (or has exited): the signal is delivered
// asynchronously, and waitid with WNOWAIT sees the stop without reaping the
// process, which exec.Cmd.Wait does.
func stopPID(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return err
	}
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), wStopped|wExited|wNoWait, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			// Not known to be stopped: do not leave it stopped.
			syscall.Kill(pid, syscall.SIGCONT)
			return errno
		}
		return nil
	}
}

// continuePID continues a process stopPID stopped.
func continuePID(pid int) error { return syscall.Kill(pid, syscall.SIGCONT) }
