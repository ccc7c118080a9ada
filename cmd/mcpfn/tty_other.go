//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package main

import "os"

// isTerminal reports whether f is a character device (a console), the
// closest this system lets the standard library tell.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// terminalWidth returns 0: the width is not asked for on this system.
func terminalWidth(*os.File) int { return 0 }
