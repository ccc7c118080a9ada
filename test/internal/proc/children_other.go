//go:build !linux

package proc

// Children returns the processes pid started that are still running (read
// from /proc; nil on systems without it).
func Children(int) []int { return nil }
