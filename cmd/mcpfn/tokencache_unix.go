//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// openFlags: opening a cache file follows no symbolic link (ELOOP) and
// does not block on a FIFO planted in its place.
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// isSymlinkErr reports whether err is the refusal of O_NOFOLLOW.
func isSymlinkErr(err error) bool { return errors.Is(err, syscall.ELOOP) }

// notSymlink: O_NOFOLLOW does it on Unix.
func notSymlink(string) error { return nil }

// checkPrivate refuses a cache file that another user owns or that others
// may read or write: its tokens could have been planted, or read.
func checkPrivate(fi os.FileInfo) error {
	if m := fi.Mode().Perm(); m&0o077 != 0 {
		return fmt.Errorf("mode %#o: others may read or write it (want 0600)", m)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("owned by uid %d, not by this user", st.Uid)
	}
	return nil
}
