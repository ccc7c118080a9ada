//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"os"
	"syscall"
	// Aliased: the package's tests have a helper named unsafe.
	ptr "unsafe"
)

// isTerminal reports whether f is a terminal: whether the terminal driver
// answers for it (the termios query isatty(3) makes). A pipe, a file and
// /dev/null are not terminals.
func isTerminal(f *os.File) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(ioctlGetTermios), uintptr(ptr.Pointer(&t)))
	return errno == 0
}

// terminalWidth returns the columns of the terminal f, or 0 if it cannot
// tell (TIOCGWINSZ, as stty size asks).
func terminalWidth(f *os.File) int {
	var ws struct{ Row, Col, X, Y uint16 }
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TIOCGWINSZ), uintptr(ptr.Pointer(&ws))); errno != 0 {
		return 0
	}
	return int(ws.Col)
}
