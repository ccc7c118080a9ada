// Package repo locates the repository's root module (github.com/mcpfn/mcpfn)
// for the test module's programs and tests, and builds its commands once per
// test binary.
package repo

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// FindRoot returns the directory of the root module's go.mod, looked for
// from the working directory up.
func FindRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/mcpfn/mcpfn\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the mcpfn module")
		}
		dir = parent
	}
}

// Root returns the directory FindRoot finds, or ends the test.
func Root(tb testing.TB) string {
	tb.Helper()
	root, err := FindRoot()
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

// Binaries builds commands of the root module with go build, once per test
// binary, into a temporary directory that Main removes. Its methods are safe
// for concurrent use.
type Binaries struct {
	// Pattern names the temporary directory, as os.MkdirTemp's pattern.
	Pattern string
	// Packages are the packages to build, relative to the root
	// ("./examples/everything"); each binary is named after the last
	// element of its package's path.
	Packages []string
	// Flags are go build flags given before the packages ("-tags",
	// "lambda.norpc"), and Env what the go command's environment adds
	// ("CGO_ENABLED=0").
	Flags, Env []string

	once sync.Once
	dir  string
	err  error
}

// Dir builds the packages the first time it is called and returns the
// directory of the binaries; a failed build ends the test (on every call).
func (b *Binaries) Dir(tb testing.TB) string {
	tb.Helper()
	b.once.Do(func() {
		root, err := FindRoot()
		if err != nil {
			b.err = err
			return
		}
		if b.dir, b.err = os.MkdirTemp("", b.Pattern); b.err != nil {
			return
		}
		args := append(append([]string{"build", "-o", b.dir + "/"}, b.Flags...), b.Packages...)
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		if len(b.Env) > 0 {
			cmd.Env = append(os.Environ(), b.Env...)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", strings.Join(b.Packages, " "), err, out)
		}
	})
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.dir
}

// Path returns the path of the binary named name, building the packages
// first as Dir does.
func (b *Binaries) Path(tb testing.TB, name string) string {
	tb.Helper()
	return filepath.Join(b.Dir(tb), name)
}

// Remove removes the binaries, once the tests that use them have ended.
func (b *Binaries) Remove() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// Main runs the tests of m, removes the binaries and exits with the tests'
// code: a package's TestMain calls it.
func (b *Binaries) Main(m *testing.M) {
	code := m.Run()
	b.Remove()
	os.Exit(code)
}
