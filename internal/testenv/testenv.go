// Package testenv tells tests which local emulators they run against, and
// ends a test that needs a missing one the same way everywhere: with the
// command that runs it.
//
// test/unit.sh (part of `make test`) starts every emulator and sets
// MCPFN_REQUIRE_DYNAMO=1 and MCPFN_REQUIRE_RIE=1, so that a missing
// emulator fails there. Under a plain `go test` a test that does not find
// its emulator is skipped with a message naming the command that runs it
// (see it with -v); under -short (`make check`) it is skipped before it
// looks.
package testenv

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// Emulator is a local stand-in for a cloud service that some tests need.
type Emulator struct {
	// Name says what the emulator is.
	Name string
	// Require names the environment variable that, set to 1, turns a
	// missing emulator into a failure.
	Require string
	// Run is the command, before "./PACKAGE", that runs a package's tests
	// with the emulator.
	Run string
}

// The emulators of the test suite.
var (
	Dynalite = Emulator{
		Name:    "dynalite (DynamoDB)",
		Require: "MCPFN_REQUIRE_DYNAMO",
		Run:     "test/dynalite/with.sh go test",
	}
	RIE = Emulator{
		Name:    "the AWS Lambda runtime interface emulator",
		Require: "MCPFN_REQUIRE_RIE",
		Run:     "MCPFN_RIE=$(test/lambdafront/install-rie.sh) go test",
	}
	// Workerd is the open-source Workers runtime, installed from npm by
	// test/workers/install.sh, which the tests run themselves.
	Workerd = Emulator{
		Name:    "workerd (Cloudflare Workers runtime)",
		Require: "MCPFN_REQUIRE_WORKERD",
		Run:     "go test",
	}
)

// SkipShort skips the test under -short, which runs without emulators.
func (e Emulator) SkipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: needs %s", e.Name)
	}
}

// Missing ends a test that needs e and did not find it (why says what is
// missing): a failure when e.Require is 1, a skip naming the command that
// runs the test otherwise.
func (e Emulator) Missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(e.Require) == "1" {
		t.Fatalf("%s: %s (%s=1)", e.Name, why, e.Require)
	}
	t.Skipf("needs %s (%s): run `%s %s` from the repository root", e.Name, why, e.Run, packageDir())
}

// DynamoEndpoint returns the URL of the dynalite the tests use
// (MCPFN_DYNAMODB_ENDPOINT), or ends the test as Dynalite.Missing does.
func DynamoEndpoint(t testing.TB) string {
	t.Helper()
	Dynalite.SkipShort(t)
	ep := os.Getenv("MCPFN_DYNAMODB_ENDPOINT")
	if ep == "" {
		Dynalite.Missing(t, "MCPFN_DYNAMODB_ENDPOINT is not set")
	}
	return ep
}

// packageDir returns the directory of the test's package relative to the
// repository root (the directory of go.work), as "./store/dynamo"; "./..."
// when it cannot tell.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "./..."
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil {
				return "./..."
			}
			return "./" + filepath.ToSlash(rel)
		}
		if filepath.Dir(dir) == dir {
			return "./..."
		}
	}
}

// Installer runs, once per test process, a script that installs what an
// Emulator needs (e.g. `run.sh --install`) and reads the "key=value" lines
// it prints.
type Installer struct {
	// Emulator is what the installed tools are; a failed install ends the
	// test as Emulator.Missing does.
	Emulator Emulator
	// Command is the script and its arguments, run from the test's
	// package directory.
	Command []string
	// Keys are the keys the script must print.
	Keys []string

	once sync.Once
	vals map[string]string
	err  error
}

// Values runs the install (once) and returns the printed values by key.
// It skips under -short, before running anything.
func (in *Installer) Values(t testing.TB) map[string]string {
	t.Helper()
	in.Emulator.SkipShort(t)
	in.once.Do(func() {
		out, err := exec.Command(in.Command[0], in.Command[1:]...).Output()
		if err != nil {
			in.err = fmt.Errorf("%s: %v", strings.Join(in.Command, " "), err)
			if ee, ok := err.(*exec.ExitError); ok {
				in.err = fmt.Errorf("%v: %s", in.err, ee.Stderr)
			}
			return
		}
		in.vals = map[string]string{}
		for _, line := range strings.Split(string(out), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				in.vals[k] = v
			}
		}
		for _, k := range in.Keys {
			if in.vals[k] == "" {
				in.err = fmt.Errorf("%s printed %q, without %s=", strings.Join(in.Command, " "), out, k)
				return
			}
		}
	})
	if in.err != nil {
		in.Emulator.Missing(t, in.err.Error())
	}
	return in.vals
}

// servingLine is the line a Node peer prints once it listens.
var servingLine = regexp.MustCompile(`serving MCP on (http\S+)`)

// StartNodePeer runs the Node script script under node, from a copy in dir
// (whose node_modules it imports), until the test ends, and returns the
// endpoint URL it prints ("serving MCP on URL"). The peer's stderr goes to
// the test's.
func StartNodePeer(t testing.TB, node, dir, script string) string {
	t.Helper()
	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(dir, "peer-*.mjs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(f.Name()) })
	if _, err := f.Write(src); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cmd := exec.Command(node, f.Name())
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, out)
			return m[1]
		}
	}
	t.Fatalf("%s did not start", script)
	return ""
}
