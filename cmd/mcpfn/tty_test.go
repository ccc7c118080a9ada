package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestIsTerminal: what is not a terminal gets the JSON document: a pipe, a
// file, and /dev/null (a character device, as terminals are, but with no
// terminal driver: a script's `mcpfn tools URL >/dev/null` must send what
// the piped command sends).
func TestIsTerminal(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for name, f := range map[string]*os.File{"pipe": w, os.DevNull: null, "file": file} {
		if isTerminal(f) {
			t.Errorf("%s is taken for a terminal", name)
		}
		if n := terminalWidth(f); n != 0 {
			t.Errorf("%s has a width of %d columns", name, n)
		}
	}
}
