// Package sizes holds the programs and checks behind the size figures of
// the benchmarks: what a build of mcpfn links.
package sizes

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// reflectMethod is how the linker's -dumpdep output marks a reachable
// function that calls reflect's Method or MethodByName with an unknown
// argument. One such call anywhere in a program makes the linker keep
// every exported method of every type converted to an interface, because
// it can no longer prove any of them unused; for mcpfn that once linked
// libyaml and the TLS stack into every build (js/wasm 15.98 MB instead of
// 11.04 MB, native 10.83 MB instead of 8.66 MB).
var reflectMethod = regexp.MustCompile(`(?m)^(\S+) <ReflectMethod>`)

// TestNoReflectMethodInLink links the examples users start from, natively
// and for Workers, and fails if any reachable function turns the linker's
// method pruning off.
func TestNoReflectMethodInLink(t *testing.T) {
	if testing.Short() {
		t.Skip("links three programs (about a minute)")
	}
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, pkg, tags string
		env             []string
	}{
		{"calculator", "./calculator", "", nil},
		// As mcpfn package lambda builds it: aws-lambda-go's RPC mode
		// (net/rpc, which reflects on methods) is for the retired go1.x
		// runtime only.
		{"lambda", "./lambda", "lambda.norpc", []string{"GOOS=linux", "GOARCH=arm64"}},
		{"workers", "./workers", "", []string{"GOOS=js", "GOARCH=wasm"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "bin")
			cmd := exec.Command("go", "build", "-tags="+tc.tags, "-trimpath", "-ldflags=-dumpdep", "-o", out, tc.pkg)
			cmd.Dir = examples
			cmd.Env = append(os.Environ(), tc.env...)
			var dump bytes.Buffer
			cmd.Stdout, cmd.Stderr = &dump, &dump
			if err := cmd.Run(); err != nil {
				t.Fatalf("go build %s: %v\n%.4000s", tc.pkg, err, dump.Bytes())
			}
			if !bytes.Contains(dump.Bytes(), []byte(" -> main.main")) {
				t.Fatalf("go build %s printed no dependency graph (was the link skipped?):\n%.2000s", tc.pkg, dump.Bytes())
			}
			seen := map[string]bool{}
			for _, m := range reflectMethod.FindAllSubmatch(dump.Bytes(), -1) {
				if fn := string(m[1]); !seen[fn] {
					seen[fn] = true
					t.Errorf("%s links %s, which calls reflect's Method or MethodByName: every exported method of every interface-converted type stays in the binary", tc.pkg, fn)
				}
			}
		})
	}
}
