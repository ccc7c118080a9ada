package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// setProcAttr makes the kernel kill the emulator if the front door dies
// without cleaning up.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// childPIDs returns the processes pid started that are still running.
func childPIDs(pid int) []int {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	var pids []int
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for f := range strings.FieldsSeq(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				pids = append(pids, n)
			}
		}
	}
	return pids
}

func killPID(pid int) { syscall.Kill(pid, syscall.SIGKILL) }

// stopPID stops pid (SIGSTOP), as Lambda freezes a sandbox, and returns
// once it is stopped (or has exited): the signal is delivered
// asynchronously, and waitid with WNOWAIT sees the stop without reaping
// the process, which exec.Cmd.Wait does. continuePID continues it
// (SIGCONT).
func stopPID(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return err
	}
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WEXITED|unix.WNOWAIT, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			// Not known to be stopped: do not leave it stopped.
			syscall.Kill(pid, syscall.SIGCONT)
		}
		return err
	}
}

func continuePID(pid int) error { return syscall.Kill(pid, syscall.SIGCONT) }
