//go:build !unix

package main

import (
	"errors"
	"os"
)

const openFlags = 0

func isSymlinkErr(error) bool { return false }

// notSymlink refuses a symbolic link (or other reparse point) at p.
func notSymlink(p string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return errors.New("not a regular file (a symbolic link)")
	}
	return nil
}

// checkPrivate: on Windows the cache lives in the user's %LocalAppData%,
// whose ACL already keeps other users out; Unix permission bits mean
// nothing there.
func checkPrivate(os.FileInfo) error { return nil }
