package release_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
)

const rootPath = "github.com/mcpfn/mcpfn"

// maxZip bounds the zip of each public module (the root's is about 620 KB).
const maxZip = 2 << 20

// size is fi's size, or -1 without fi.
func size(fi os.FileInfo) int64 {
	if fi == nil {
		return -1
	}
	return fi.Size()
}

// public is one public module, as `release modules` lists it.
type public struct{ dir, path string }

// goEnv runs go in dir with env (nil: the test's own environment) and
// returns its combined output, failing the test on an error.
func goEnv(t *testing.T, dir string, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	t.Logf("go %s: %s", strings.Join(args, " "), time.Since(start).Round(100*time.Millisecond))
	return out
}

// userEnv is the environment of a user outside the repository: no
// workspace, the module cache gomodcache (so that no github.com/mcpfn
// module is taken from, or left in, the machine's), the proxy at dir first,
// then the machine's download cache (a GOPROXY too: third-party modules
// without the network) and its GOPROXY; the sum database is not asked
// about github.com/mcpfn/mcpfn (GONOSUMDB; GOPRIVATE would also bypass the
// proxy, GONOPROXY being its default).
func userEnv(t *testing.T, proxyDir, gomodcache, gobin string) []string {
	t.Helper()
	machine := func(name string) string {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		return strings.TrimSpace(string(out))
	}
	goproxy := "file://" + proxyDir + ",file://" + filepath.Join(machine("GOMODCACHE"), "cache", "download")
	if p := machine("GOPROXY"); p != "" && p != "off" {
		goproxy += "," + p
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GOWORK", "GOFLAGS", "GOPROXY", "GOMODCACHE", "GONOSUMDB", "GONOPROXY", "GOPRIVATE", "GOBIN", "GOTOOLCHAIN":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GOWORK=off", "GOTOOLCHAIN=local", "GOPROXY="+goproxy, "GONOSUMDB="+rootPath,
		"GOMODCACHE="+gomodcache, "GOBIN="+gobin,
		// -modcacherw lets the test remove its module cache; -trimpath
		// makes the build cache shared with earlier runs despite the
		// fresh module cache.
		"GOFLAGS=-mod=mod -modcacherw -trimpath")
}

// TestReleaseResolves: in a fresh module outside the repository, with
// only the file proxy of tools/release/proxy.sh and the default proxy for
// third-party modules, every public module resolves with `go get`, a user
// importing each tidies cleanly (a second tidy changes nothing) and builds,
// every github.com/mcpfn module comes from the file proxy (go.sum holds the
// hashes of its zips), no module the release does not publish reaches the
// graph, `go get` without a version (the README's form) resolves each
// module at VERSION, and `go install .../cmd/mcpfn@VERSION` (and @latest)
// gives a working binary.
func TestReleaseResolves(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the release and resolves it like a user (network, ~1 min)")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	version := siblingVersion(t, root)
	t.Logf("release %s", version)

	proxyDir := t.TempDir()
	start := time.Now()
	cmd := exec.Command(filepath.Join(root, "tools", "release", "proxy.sh"), proxyDir, version)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tools/release/proxy.sh: %v\n%s", err, out)
	}
	t.Logf("proxy.sh: %s", time.Since(start).Round(100*time.Millisecond))

	tool := filepath.Join(root, "tools", "release")
	var mods []public
	for _, line := range strings.Split(strings.TrimSpace(string(goEnv(t, tool, append(os.Environ(), "GOWORK=off"), "run", ".", "modules"))), "\n") {
		dir, path, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("release modules: %q", line)
		}
		mods = append(mods, public{dir, path})
	}
	for _, want := range []string{".", "adapters/lambda", "adapters/gcf", "store/dynamo", "store/secretsmanager", "auth"} {
		if !slices.ContainsFunc(mods, func(m public) bool { return m.dir == want }) {
			t.Fatalf("release modules does not list %s: %v", want, mods)
		}
	}

	// The hashes a user's go.sum must hold for each module from the proxy.
	sums := map[string]bool{}
	for _, m := range mods {
		esc, err := module.EscapePath(m.path)
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Join(proxyDir, filepath.FromSlash(esc), "@v", version)
		h, err := dirhash.HashZip(base+".zip", dirhash.Hash1)
		if err != nil {
			t.Fatal(err)
		}
		sums[m.path+" "+version+" "+h] = true
		// Every user downloads the zip: a stray build output (a committed
		// binary once made the root's 14 MB) fails here.
		if fi, err := os.Stat(base + ".zip"); err != nil || fi.Size() > maxZip {
			t.Errorf("%s@%s zip: %v bytes (%v), more than %d: a build output or data file is tracked?", m.path, version, size(fi), err, maxZip)
		}
		h, err = dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) { return os.Open(base + ".mod") })
		if err != nil {
			t.Fatal(err)
		}
		sums[m.path+" "+version+"/go.mod "+h] = true
	}

	gomodcache, gobin := t.TempDir(), t.TempDir()
	env := userEnv(t, proxyDir, gomodcache, gobin)

	// One user of everything: get, tidy twice, build, and the go.sum check.
	var imports, gets []string
	for _, m := range mods {
		gets = append(gets, m.path+"@"+version)
		imports = append(imports, packagesOf(t, root, m)...)
	}
	dir := userModule(t, root, env, gets, imports)
	goEnv(t, dir, env, "build", "-o", filepath.Join(t.TempDir(), "user"), ".")
	sum, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range sums {
		if !bytes.Contains(sum, []byte(line+"\n")) {
			t.Errorf("go.sum lacks %q: the module did not come from the file proxy", line)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(string(goEnv(t, dir, env, "list", "-m", "all"))), "\n")[1:] {
		f := strings.Fields(line)
		if strings.HasPrefix(f[0], rootPath) && !slices.ContainsFunc(mods, func(m public) bool { return m.path == f[0] }) {
			t.Errorf("a user's graph holds %s, which the release does not publish", line)
		}
		if len(f) > 1 && strings.HasPrefix(f[0], rootPath) && f[1] != version {
			t.Errorf("a user's graph holds %s, not at %s", line, version)
		}
	}

	// A user of each public module alone, with the README's command (no
	// version: the latest, which the file proxy answers).
	for _, m := range mods {
		t.Run("user of "+m.dir, func(t *testing.T) {
			dir := userModule(t, root, env, []string{m.path}, packagesOf(t, root, m))
			if got := strings.TrimSpace(string(goEnv(t, dir, env, "list", "-m", "-f", "{{.Version}}", m.path))); got != version {
				t.Errorf("go get %s resolved %s, want %s", m.path, got, version)
			}
		})
	}

	t.Run("go install cmd/mcpfn", func(t *testing.T) {
		goEnv(t, t.TempDir(), env, "install", rootPath+"/cmd/mcpfn@"+version)
		bin := filepath.Join(gobin, "mcpfn")
		out, err := exec.Command(bin, "--help").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "mcpfn [flags] call URL TOOL") {
			t.Errorf("mcpfn --help: %v, printed no usage:\n%s", err, out)
		}
		// The installed binary knows the release it was built from.
		out, err = exec.Command(bin, "--version").CombinedOutput()
		if err != nil || !strings.Contains(string(out), version) {
			t.Errorf("mcpfn --version: %v, does not name %s:\n%s", err, version, out)
		}
		info := string(goEnv(t, t.TempDir(), env, "version", "-m", bin))
		if !strings.Contains(info, "mod\t"+rootPath+"\t"+version+"\t") {
			t.Errorf("the installed mcpfn is not %s %s:\n%s", rootPath, version, info)
		}
		// @latest, the README's form, is the same release.
		latest := t.TempDir()
		goEnv(t, t.TempDir(), append(env, "GOBIN="+latest), "install", rootPath+"/cmd/mcpfn@latest")
		info = string(goEnv(t, t.TempDir(), env, "version", "-m", filepath.Join(latest, "mcpfn")))
		if !strings.Contains(info, "mod\t"+rootPath+"\t"+version+"\t") {
			t.Errorf("go install %s/cmd/mcpfn@latest is not %s:\n%s", rootPath, version, info)
		}
	})
}

// userModule makes a fresh module under a temporary directory whose main
// imports imports, runs `go get` of gets, `go mod tidy`, and checks that a
// second tidy changes nothing. It returns the module's directory.
func userModule(t *testing.T, root string, env, gets, imports []string) string {
	t.Helper()
	dir := t.TempDir()
	if rel, err := filepath.Rel(root, dir); err == nil && !strings.HasPrefix(rel, "..") {
		t.Fatalf("the user module %s is inside the repository", dir)
	}
	goEnv(t, dir, env, "mod", "init", "example.com/user")
	goEnv(t, dir, env, append([]string{"get"}, gets...)...)
	var main strings.Builder
	main.WriteString("package main\n\nimport (\n")
	for _, imp := range imports {
		main.WriteString("\t_ \"" + imp + "\"\n")
	}
	main.WriteString(")\n\nfunc main() {}\n")
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	goEnv(t, dir, env, "mod", "tidy")
	goEnv(t, dir, env, "mod", "tidy", "-diff")
	return dir
}

// packagesOf returns the packages a user imports from m: the root module's
// server, adapter and client packages, and the package at the root of each
// other module.
func packagesOf(t *testing.T, root string, m public) []string {
	t.Helper()
	if m.dir == "." {
		return []string{rootPath + "/core", rootPath + "/adapters/nethttp", rootPath + "/client", rootPath + "/store/memory"}
	}
	files, _ := filepath.Glob(filepath.Join(root, m.dir, "*.go"))
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			return []string{m.path}
		}
	}
	t.Fatalf("%s has no package at its root for a user to import", m.dir)
	return nil
}

// siblingVersion returns the version at which the public modules require
// the root module: the release being prepared.
func siblingVersion(t *testing.T, root string) string {
	t.Helper()
	p := filepath.Join(root, "adapters", "lambda", "go.mod")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse(p, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Require {
		if r.Mod.Path == rootPath {
			return r.Mod.Version
		}
	}
	t.Fatalf("%s does not require %s", p, rootPath)
	return ""
}
