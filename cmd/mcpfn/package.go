package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// package lambda: a deployment package for the provided.al2023 runtime of
// AWS Lambda, which runs the executable named bootstrap at the root of the
// function's zip. The executable is the user's main package cross-compiled
// by the go command on PATH:
//
//	GOOS=linux GOARCH=arm64|amd64 CGO_ENABLED=0
//	go build -tags lambda.norpc -trimpath -ldflags='-s -w -buildid=' -o bootstrap PKG
//
// lambda.norpc leaves out aws-lambda-go's RPC mode, which only the retired
// go1.x runtime used; CGO_ENABLED=0 makes a static binary, since the
// runtime's libc is not the build machine's. -trimpath, an empty build ID
// and no symbol table make the executable depend on the sources and the Go
// release only, not on where or when it was built; the zip around it has
// one entry with fixed header fields, so the same sources give the same
// bytes (and the same source_code_hash to Terraform) on every machine.

// zipTime is the modification time of bootstrap in every zip: fixed, so
// that the zip depends on its content only. 2026-01-01T00:00:00Z, in the
// range of MS-DOS dates (1980-2107) the zip header holds.
func zipTime() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

// lambdaPackage is what package lambda builds.
type lambdaPackage struct {
	// Pkg is the package to build, as the go command takes it: a directory
	// (".", "./cmd/fn") or an import path. "" means ".".
	Pkg string
	// Arch is arm64 or amd64 (x86_64 is taken for amd64, as Lambda names
	// it).
	Arch string
	// Out is the zip to write; "" means lambda-ARCH.zip. A relative name
	// is relative to Dir.
	Out string
	// Dir is the directory the go command runs in; "" means the process's.
	Dir string
	// Env is the go command's environment; nil means the process's. The
	// cross-compilation variables are set on top of it.
	Env []string
	// GoCmd is the go command; "" means "go", looked up on PATH.
	GoCmd string
	// Stderr receives the go command's diagnostics.
	Stderr io.Writer
}

// lambdaResult describes the zip written: the JSON document of package
// lambda.
type lambdaResult struct {
	Zip     string `json:"zip"`
	Package string `json:"package"`
	Arch    string `json:"architecture"`
	Size    int64  `json:"size"`
	// Bootstrap is the size of the executable.
	Bootstrap int64  `json:"bootstrapSize"`
	SHA256    string `json:"sha256"`
	// Base64SHA256 is what Terraform's filebase64sha256 gives for the zip
	// (aws_lambda_function.source_code_hash).
	Base64SHA256 string `json:"base64sha256"`
}

func (r *lambdaResult) writeText(w *bufio.Writer) {
	fmt.Fprintf(w, "wrote %s: %s for linux/%s (Lambda architecture %s), bootstrap %s, zip %s\n",
		oneLine(r.Zip), oneLine(r.Package), r.Arch, lambdaArch(r.Arch), byteSize(int(r.Bootstrap)), byteSize(int(r.Size)))
	fmt.Fprintf(w, "sha256 %s (base64 %s)\n", r.SHA256, r.Base64SHA256)
}

// goarch returns the GOARCH of an architecture as package lambda takes it.
func goarch(arch string) (string, bool) {
	switch arch {
	case "arm64":
		return "arm64", true
	case "amd64", "x86_64":
		return "amd64", true
	}
	return "", false
}

// lambdaArch is the name Lambda gives a GOARCH.
func lambdaArch(goarch string) string {
	if goarch == "amd64" {
		return "x86_64"
	}
	return goarch
}

// buildSetup resolves what every package command needs before it builds:
// the output path (defaultOut when out is empty; relative to dir), the go
// command on PATH (goCmd, default "go") and the build environment (env,
// default the process's) for goos/goarch without cgo. what names the
// command in errors.
func buildSetup(out, defaultOut, dir, goCmd string, env []string, what, goos, goarch string) (string, string, []string, error) {
	if out == "" {
		out = defaultOut
	}
	if !filepath.IsAbs(out) && dir != "" {
		out = filepath.Join(dir, out)
	}
	if goCmd == "" {
		goCmd = "go"
	}
	goPath, err := exec.LookPath(goCmd)
	if err != nil {
		return "", "", nil, fmt.Errorf("the go command (%s) is not on PATH: package %s builds with the Go toolchain; install it from https://go.dev/dl/", goCmd, what)
	}
	if env == nil {
		env = os.Environ()
	}
	env = append(env[:len(env):len(env)], "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	return out, goPath, env, nil
}

// packageLambda builds p and writes its zip.
func packageLambda(ctx context.Context, p lambdaPackage) (*lambdaResult, error) {
	arch, ok := goarch(p.Arch)
	if !ok {
		return nil, fmt.Errorf("unknown architecture %q: Lambda runs arm64 or x86_64 (amd64)", p.Arch)
	}
	pkg := p.Pkg
	if pkg == "" {
		pkg = "."
	}
	if strings.Contains(pkg, "...") {
		return nil, fmt.Errorf("%s names several packages: give the one main package of the function", pkg)
	}
	out, goPath, env, err := buildSetup(p.Out, "lambda-"+arch+".zip", p.Dir, p.GoCmd, p.Env, "lambda", "linux", arch)
	if err != nil {
		return nil, err
	}
	stderr := p.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	goRun := func(args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, goPath, args...)
		cmd.Dir, cmd.Env = p.Dir, env
		return cmd
	}

	// The package must be one main package, as the target sees it.
	list := goRun("list", "-f", "{{.Name}} {{.ImportPath}}", pkg)
	var listErr bytes.Buffer
	list.Stderr = &listErr
	listOut, err := list.Output()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("go list %s:%s", pkg, goDiagnostic(listErr.Bytes(), err))
	}
	lines := strings.Split(strings.TrimSpace(string(listOut)), "\n")
	if len(lines) != 1 {
		return nil, fmt.Errorf("%s names %d packages: give the one main package of the function", pkg, len(lines))
	}
	name, importPath, _ := strings.Cut(lines[0], " ")
	if name != "main" {
		return nil, fmt.Errorf("%s is package %s, not a main package: Lambda runs a command, so give the directory of the function's package main", importPath, name)
	}

	tmp, err := os.MkdirTemp("", "mcpfn-package-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "bootstrap")
	build := goRun("build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w -buildid=", "-o", bin, pkg)
	var buildErr bytes.Buffer
	build.Stdout, build.Stderr = stderr, &buildErr
	if err := build.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("go build %s for linux/%s:%s", importPath, arch, goDiagnostic(buildErr.Bytes(), err))
	}
	stderr.Write(buildErr.Bytes()) // warnings of a build that succeeded

	exe, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	zipBytes, err := bootstrapZip(exe)
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(out, zipBytes); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(zipBytes)
	return &lambdaResult{Zip: out, Package: importPath, Arch: arch, Size: int64(len(zipBytes)),
		Bootstrap: int64(len(exe)), SHA256: hex.EncodeToString(sum[:]),
		Base64SHA256: base64.StdEncoding.EncodeToString(sum[:])}, nil
}

// goDiagnostic is what the go command said on failure (on lines of its
// own), or how it failed.
func goDiagnostic(stderr []byte, err error) string {
	if s := strings.TrimSpace(string(stderr)); s != "" {
		return "\n" + s
	}
	return " " + err.Error()
}

// bootstrapZip is the deployment package of exe: one entry, bootstrap,
// mode 0755 (the runtime executes it), deflated, with fixed header
// fields. The bytes depend on exe and the Go release only.
func bootstrapZip(exe []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	h := &zip.FileHeader{Name: "bootstrap", Method: zip.Deflate, Modified: zipTime()}
	h.SetMode(0o755)
	w, err := zw.CreateHeader(h)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(exe); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeFileAtomic writes b to name through a temporary file in the same
// directory, so that a reader (terraform plan) never sees half a zip.
func writeFileAtomic(name string, b []byte) error {
	dir := filepath.Dir(name)
	f, err := os.CreateTemp(dir, "."+filepath.Base(name)+".tmp-")
	if err != nil {
		if u := errors.Unwrap(err); u != nil {
			err = u // the temporary name says nothing to the user
		}
		return fmt.Errorf("cannot write %s: %w", strconv.Quote(name), err)
	}
	defer os.Remove(f.Name())
	if _, err = f.Write(b); err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", strconv.Quote(name), err)
	}
	return nil
}
