package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestPackageDir checks that the command of a skip names this package from
// the repository root.
func TestPackageDir(t *testing.T) {
	if got := packageDir(); got != "./internal/testenv" {
		t.Errorf("packageDir() = %q, want ./internal/testenv", got)
	}
}

// TestMissingSkipsWithTheCommand checks the skip message of a missing
// emulator, and that MCPFN_REQUIRE_DYNAMO=1 turns it into a failure.
func TestMissingSkipsWithTheCommand(t *testing.T) {
	t.Setenv("MCPFN_DYNAMODB_ENDPOINT", "")
	for _, require := range []string{"", "1"} {
		t.Setenv("MCPFN_REQUIRE_DYNAMO", require)
		r := &recorder{TB: t}
		done := make(chan struct{})
		go func() { // Skipf and Fatalf end the goroutine
			defer close(done)
			DynamoEndpoint(r)
		}()
		<-done
		want := "needs dynalite (DynamoDB) (MCPFN_DYNAMODB_ENDPOINT is not set): run `test/dynalite/with.sh go test ./internal/testenv` from the repository root"
		if testing.Short() {
			want = "-short: needs dynalite (DynamoDB)"
		} else if require == "1" {
			want = "dynalite (DynamoDB): MCPFN_DYNAMODB_ENDPOINT is not set (MCPFN_REQUIRE_DYNAMO=1)"
		}
		if r.msg != want {
			t.Errorf("MCPFN_REQUIRE_DYNAMO=%q: %s %q, want %q", require, r.how, r.msg, want)
		}
		if wantHow := map[bool]string{true: "fatal", false: "skip"}[require == "1" && !testing.Short()]; r.how != wantHow {
			t.Errorf("MCPFN_REQUIRE_DYNAMO=%q: the test ended with %s, want %s", require, r.how, wantHow)
		}
	}
}

// recorder records how a helper ended a test.
type recorder struct {
	testing.TB
	how, msg string
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) {
	r.how, r.msg = "skip", strings.TrimSpace(fmt.Sprintf(format, args...))
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.how, r.msg = "fatal", strings.TrimSpace(fmt.Sprintf(format, args...))
	runtime.Goexit()
}

// TestInstaller checks that an Installer runs its script once, reads its
// key=value lines, and ends the test as Missing does when a key is absent
// or the script fails.
func TestInstaller(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a shell script")
	}
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	script := filepath.Join(dir, "install.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho run >> "+count+"\necho noise\necho node=/bin/node\necho dir=/pkgs\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	emu := Emulator{Name: "test tools", Require: "MCPFN_REQUIRE_TESTTOOLS", Run: "go test"}
	in := &Installer{Emulator: emu, Command: []string{script}, Keys: []string{"node", "dir"}}
	for range 3 {
		if v := in.Values(t); v["node"] != "/bin/node" || v["dir"] != "/pkgs" {
			t.Fatalf("Values = %v", v)
		}
	}
	if b, _ := os.ReadFile(count); string(b) != "run\n" {
		t.Fatalf("the script ran %q, want once", b)
	}

	for name, in := range map[string]*Installer{
		"missing key": {Emulator: emu, Command: []string{script}, Keys: []string{"node", "port"}},
		"failing":     {Emulator: emu, Command: []string{"/bin/false"}},
	} {
		t.Setenv("MCPFN_REQUIRE_TESTTOOLS", "1")
		r := &recorder{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			in.Values(r)
		}()
		<-done
		if r.how != "fatal" || !strings.HasPrefix(r.msg, "test tools: ") {
			t.Errorf("%s: ended with %s %q, want a failure naming the tools", name, r.how, r.msg)
		}
	}
}
