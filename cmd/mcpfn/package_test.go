package main

import (
	"archive/zip"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tinyFunction writes a main package in a module of its own under dir and
// returns its directory. A file that builds only without the lambda.norpc
// tag, and does not compile, proves the tag is set.
func tinyFunction(t *testing.T, dir string) string {
	t.Helper()
	files := map[string]string{
		"go.mod":     "module example.com/tinyfn\n\ngo 1.26\n",
		"main.go":    "package main\n\nimport \"os\"\n\nfunc main() { os.Stdout.WriteString(\"bootstrap\\n\") }\n",
		"rpc.go":     "//go:build !lambda.norpc\n\npackage main\n\nvar _ = thisDoesNotCompileWithoutTheNorpcTag\n",
		"lib/lib.go": "package lib\n\nconst X = 1\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// goEnv is the environment of the go command in these tests: the
// process's (its build cache, so that only the first build of a target
// compiles the standard library), outside any workspace, with the local
// toolchain.
func goEnv() []string {
	return append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=")
}

// packageRun runs mcpfn package lambda in dir; the JSON document it prints
// is decoded into a lambdaResult.
func packageRun(t *testing.T, dir string, args ...string) (int, *lambdaResult, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runEnv(context.Background(), append([]string{"package", "lambda"}, args...),
		&env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, dir: dir, environ: goEnv()})
	if code != exitOK {
		return code, nil, errb.String()
	}
	var r lambdaResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("stdout is not the JSON document: %v: %s", err, out.String())
	}
	return code, &r, errb.String()
}

// checkZip checks a deployment package: one entry, bootstrap, a regular
// file of mode 0755 at the fixed time, a static linux ELF executable for
// machine.
func checkZip(t *testing.T, name string, machine elf.Machine) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(zr.File) != 1 {
		t.Fatalf("%s holds %d files, want 1", name, len(zr.File))
	}
	f := zr.File[0]
	if f.Name != "bootstrap" || f.Mode() != 0o755 || !f.Modified.Equal(zipTime()) || f.Method != zip.Deflate {
		t.Errorf("%s: entry %q mode %v modified %v method %d", name, f.Name, f.Mode(), f.Modified, f.Method)
	}
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.NewFile(bytes.NewReader(exe))
	if err != nil {
		t.Fatalf("%s: bootstrap is not ELF: %v", name, err)
	}
	defer ef.Close()
	if ef.Machine != machine || ef.Class != elf.ELFCLASS64 || ef.Type != elf.ET_EXEC {
		t.Errorf("%s: bootstrap is %v %v %v, want %v ELFCLASS64 ET_EXEC", name, ef.Machine, ef.Class, ef.Type, machine)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s: bootstrap is dynamically linked (CGO_ENABLED=0 not in effect)", name)
		}
	}
	if ef.Section(".symtab") != nil {
		t.Errorf("%s: bootstrap keeps its symbol table (-ldflags=-s not in effect)", name)
	}
	return b
}

// TestPackageLambda runs the real go command: the zip of a main package
// holds a linux bootstrap for the architecture asked for, and two builds
// (of two copies in different directories) give the same bytes.
func TestPackageLambda(t *testing.T) {
	t.Parallel()
	a := tinyFunction(t, t.TempDir())
	code, r, errs := packageRun(t, a)
	if code != exitOK {
		t.Fatalf("package lambda: exit %d\n%s", code, errs)
	}
	// The defaults: the package in the directory, arm64, lambda-arm64.zip.
	if r.Zip != filepath.Join(a, "lambda-arm64.zip") || r.Arch != "arm64" || r.Package != "example.com/tinyfn" {
		t.Errorf("result %+v", r)
	}
	first := checkZip(t, r.Zip, elf.EM_AARCH64)

	b := tinyFunction(t, t.TempDir())
	out := filepath.Join(t.TempDir(), "fn.zip")
	code, r2, errs := packageRun(t, b, "-o", out, "-arch", "arm64", ".")
	if code != exitOK {
		t.Fatalf("package lambda -o: exit %d\n%s", code, errs)
	}
	second := checkZip(t, out, elf.EM_AARCH64)
	if !bytes.Equal(first, second) || r.SHA256 != r2.SHA256 {
		t.Fatalf("two builds differ: sha256 %s and %s", r.SHA256, r2.SHA256)
	}
	t.Logf("two builds, sha256 %s and %s (%d bytes)", r.SHA256, r2.SHA256, r.Size)

	// Text on a terminal.
	var o, e bytes.Buffer
	if code := runEnv(context.Background(), []string{"package", "lambda", "-o", out}, &env{stdin: strings.NewReader(""), stdout: &o, stderr: &e, tty: true, dir: b, environ: goEnv()}); code != exitOK ||
		!strings.HasPrefix(o.String(), "wrote "+out+": example.com/tinyfn for linux/arm64 (Lambda architecture arm64)") || !strings.Contains(o.String(), "sha256 "+r.SHA256) {
		t.Errorf("on a terminal: exit %d %q %q", code, o.String(), e.String())
	}

	if testing.Short() {
		return // amd64 may compile the standard library once more
	}
	code, r3, errs := packageRun(t, a, "-arch", "x86_64", "-o", "amd.zip")
	if code != exitOK {
		t.Fatalf("package lambda -arch x86_64: exit %d\n%s", code, errs)
	}
	if r3.Arch != "amd64" || r3.Zip != filepath.Join(a, "amd.zip") {
		t.Errorf("result %+v", r3)
	}
	checkZip(t, r3.Zip, elf.EM_X86_64)
}

// TestPackageLambdaErrors: what cannot be packaged fails with a message
// that says why, and writes nothing.
func TestPackageLambdaErrors(t *testing.T) {
	t.Parallel()
	dir := tinyFunction(t, t.TempDir())
	if err := os.MkdirAll(filepath.Join(dir, "broken"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken", "main.go"), []byte("package main\n\nfunc main() { undefinedThing() }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"./lib"}, "example.com/tinyfn/lib is package lib, not a main package"},
		{[]string{"./..."}, "names several packages"},
		{[]string{"./nowhere"}, "go list ./nowhere:"},
		{[]string{"./broken"}, "undefined: undefinedThing"},
		{[]string{"-o", filepath.Join(dir, "no", "such", "dir", "fn.zip")}, "cannot write"},
	} {
		code, _, errs := packageRun(t, dir, tc.args...)
		if code != exitFailure || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errs, tc.want)
		}
	}
	if _, err := packageLambda(context.Background(), lambdaPackage{Arch: "arm64", Dir: dir, GoCmd: "mcpfn-no-such-go-command"}); err == nil || !strings.Contains(err.Error(), "is not on PATH") {
		t.Errorf("no go command: %v", err)
	}
	if _, err := packageLambda(context.Background(), lambdaPackage{Arch: "s390x", Dir: dir}); err == nil || !strings.Contains(err.Error(), "arm64 or x86_64") {
		t.Errorf("bad arch: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*.zip*"))
	if len(left) != 0 {
		t.Errorf("failed runs left %v", left)
	}
}
