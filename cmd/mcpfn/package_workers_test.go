package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpfn/mcpfn/internal/testenv"
)

// repoDir is the repository's root, from this package's directory.
func repoDir(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// workersRun runs mcpfn package workers in dir inside the repository's
// workspace (examples/workers depends on the adapter through it).
func workersRun(t *testing.T, dir string, args ...string) (int, *workersResult, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runEnv(context.Background(), append([]string{"package", "workers"}, args...),
		&env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, dir: dir,
			environ: append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=")})
	if code != exitOK {
		return code, nil, errb.String()
	}
	var r workersResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("stdout is not the JSON document: %v: %s", err, out.String())
	}
	return code, &r, errb.String()
}

var examplePkg struct {
	once sync.Once
	dir  string
	res  *workersResult
	err  string
}

// examplePackage packages examples/workers once per test process.
func examplePackage(t *testing.T) (string, *workersResult) {
	t.Helper()
	examplePkg.once.Do(func() {
		dir, err := os.MkdirTemp("", "mcpfn-workers-")
		if err != nil {
			examplePkg.err = err.Error()
			return
		}
		code, r, errs := workersRun(t, filepath.Join(repoDir(t), "examples", "workers"), "-o", dir, ".")
		if code != exitOK {
			examplePkg.err = fmt.Sprintf("package workers examples/workers: exit %d\n%s", code, errs)
			return
		}
		examplePkg.dir, examplePkg.res = dir, r
	})
	if examplePkg.err != "" {
		t.Fatal(examplePkg.err)
	}
	return examplePkg.dir, examplePkg.res
}

var workersFiles = []string{"app.wasm", "state.mjs", "wasm_exec.js", "worker.mjs", "workerd.capnp", "wrangler.toml"}

// TestPackageWorkersReproducible packages examples/workers twice, from two
// working directories into two output directories: every file is the same
// bytes.
func TestPackageWorkersReproducible(t *testing.T) {
	t.Parallel()
	a, r := examplePackage(t)
	if r.Name != "workers" || r.Package != "github.com/mcpfn/mcpfn/examples/workers" || r.DevKey || !slices.Equal(r.Files, workersFiles) {
		t.Errorf("result %+v", r)
	}
	b := t.TempDir()
	code, r2, errs := workersRun(t, repoDir(t), "-o", b, "./examples/workers")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if r2.Wasm != r.Wasm || r2.Name != r.Name {
		t.Errorf("second result %+v, first %+v", r2, r)
	}
	for _, f := range workersFiles {
		x, err1 := os.ReadFile(filepath.Join(a, f))
		y, err2 := os.ReadFile(filepath.Join(b, f))
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", f, err1, err2)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two packagings of the same sources", f)
		}
	}
	if fi, err := os.Stat(filepath.Join(a, "app.wasm")); err != nil || fi.Size() != r.Wasm || !bytes.HasPrefix(must(os.ReadFile(filepath.Join(a, "app.wasm"))), []byte("\x00asm")) {
		t.Errorf("app.wasm: %v, size %d, want a wasm module of %d bytes", err, fi.Size(), r.Wasm)
	}
	goroot, _ := exec.Command("go", "env", "GOROOT").Output()
	if want, _ := os.ReadFile(filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "wasm_exec.js")); !bytes.Equal(want, must(os.ReadFile(filepath.Join(a, "wasm_exec.js")))) {
		t.Error("wasm_exec.js is not the one of the go command's GOROOT")
	}
	for _, g := range []string{"worker.mjs", "state.mjs"} {
		if want, _ := os.ReadFile(filepath.Join(repoDir(t), "adapters", "workers", "glue", g)); !bytes.Equal(want, must(os.ReadFile(filepath.Join(a, g)))) {
			t.Errorf("%s is not the glue's", g)
		}
	}
	capnp := string(must(os.ReadFile(filepath.Join(a, "workerd.capnp"))))
	for _, s := range []string{"    # extra bindings\n", `(name = "MCPFN_LOCAL_ADDR", text = "127.0.0.1:8787")`, `(name = "internet", network = (allow = ["public", "private", "local"]))`,
		`(name = "app.wasm", wasm = embed "app.wasm")`, `durableObjectStorage = (inMemory = void)`} {
		if !strings.Contains(capnp, s) {
			t.Errorf("workerd.capnp lacks %q:\n%s", s, capnp)
		}
	}
	if strings.Contains(capnp, "MCPFN_STATE_KEY") {
		t.Error("workerd.capnp holds MCPFN_STATE_KEY without -dev-key")
	}

	// -dev-key and -name; on a terminal, the text says what was written.
	c := t.TempDir()
	var o, e bytes.Buffer
	code = runEnv(context.Background(), []string{"package", "workers", "-dev-key", "-name", "my-calc", "-o", c, "./examples/workers"},
		&env{stdin: strings.NewReader(""), stdout: &o, stderr: &e, tty: true, dir: repoDir(t), environ: append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=")})
	if code != exitOK || !strings.HasPrefix(o.String(), "wrote "+c+": github.com/mcpfn/mcpfn/examples/workers as the Worker my-calc, app.wasm ") {
		t.Fatalf("exit %d %q %q", code, o.String(), e.String())
	}
	capnp2 := string(must(os.ReadFile(filepath.Join(c, "workerd.capnp"))))
	if !strings.Contains(capnp2, `(name = "MCPFN_STATE_KEY", text = "`) || !strings.Contains(capnp2, "# extra bindings") {
		t.Errorf("-dev-key: workerd.capnp:\n%s", capnp2)
	}
	if toml := string(must(os.ReadFile(filepath.Join(c, "wrangler.toml")))); !strings.Contains(toml, `name = "my-calc"`) || !strings.Contains(toml, `service = "my-calc"`) {
		t.Errorf("-name: wrangler.toml:\n%s", toml)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestWorkerName: a directory's name becomes a name Cloudflare accepts.
func TestWorkerName(t *testing.T) {
	for in, want := range map[string]string{
		"workers": "workers", "My_Calc": "my-calc", "--a..b--": "a-b", "ü": "", "calc2": "calc2",
		strings.Repeat("x", 70): strings.Repeat("x", 63),
	} {
		if got := workerName(in); got != want {
			t.Errorf("workerName(%q) = %q, want %q", in, got, want)
		}
	}
	if validWorkerName("My-calc") || validWorkerName("a--b") || !validWorkerName("a-b") {
		t.Error("validWorkerName")
	}
}

// TestPackageWorkersErrors: what cannot be packaged fails with a message
// that says why, and writes nothing.
func TestPackageWorkersErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tiny := tinyFunction(t, filepath.Join(dir, "tiny"))
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-o", out}, exitFailure, "does not import github.com/mcpfn/mcpfn/adapters/workers"},
		{[]string{"-o", out, "./lib"}, exitFailure, "not a main package"},
		{[]string{"-o", out, "-name", "Bad_Name"}, exitUsage, "-name must be"},
		{[]string{"-o", out, "-arch", "arm64"}, exitUsage, "-arch is a flag of package lambda"},
		{[]string{"-o", out, ".", "x"}, exitUsage, "one PATH"},
	} {
		var o, e bytes.Buffer
		code := runEnv(context.Background(), append([]string{"package", "workers"}, c.args...),
			&env{stdin: strings.NewReader(""), stdout: &o, stderr: &e, dir: tiny, environ: goEnv()})
		if code != c.code || !strings.Contains(e.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, e.String(), c.code, c.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed package wrote %s (%v)", out, err)
	}
}

// tomlValue is a value of the TOML subset wrangler.toml uses.
type tomlTable = map[string]any

// parseTOML parses the subset of TOML package workers writes: comments,
// key = "string" | true | false | ["string", ...], [table] and
// [[array.of.tables]] headers. Anything else is an error.
func parseTOML(src string) (tomlTable, error) {
	root := tomlTable{}
	cur := root
	for i, line := range strings.Split(src, "\n") {
		l := strings.TrimSpace(line)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasPrefix(l, "[[") && strings.HasSuffix(l, "]]") {
			path := strings.Split(strings.TrimSpace(l[2:len(l)-2]), ".")
			t := root
			for _, p := range path[:len(path)-1] {
				sub, _ := t[p].(tomlTable)
				if sub == nil {
					sub = tomlTable{}
					t[p] = sub
				}
				t = sub
			}
			last := path[len(path)-1]
			arr, _ := t[last].([]tomlTable)
			cur = tomlTable{}
			t[last] = append(arr, cur)
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return nil, fmt.Errorf("line %d: %q", i+1, line)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if _, dup := cur[k]; dup {
			return nil, fmt.Errorf("line %d: %s set twice", i+1, k)
		}
		switch {
		case v == "true" || v == "false":
			cur[k] = v == "true"
		case strings.HasPrefix(v, `"`):
			var s string
			if err := json.Unmarshal([]byte(v), &s); err != nil {
				return nil, fmt.Errorf("line %d: %v", i+1, err)
			}
			cur[k] = s
		case strings.HasPrefix(v, "["):
			var a []string
			if err := json.Unmarshal([]byte(v), &a); err != nil {
				return nil, fmt.Errorf("line %d: %v", i+1, err)
			}
			cur[k] = a
		default:
			return nil, fmt.Errorf("line %d: value %q", i+1, v)
		}
	}
	return root, nil
}

// TestWranglerToml: wrangler.toml names the entry module, the rules and
// the bindings the glue uses.
func TestWranglerToml(t *testing.T) {
	cfg, err := parseTOML(wranglerToml("calc"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(cfg)
	want := `{"compatibility_date":"2026-11-01","durable_objects":{"bindings":[{"class_name":"McpfnState","name":"MCPFN_STATE"}]},` +
		`"find_additional_modules":true,"main":"worker.mjs","migrations":[{"new_sqlite_classes":["McpfnState"],"tag":"v1"}],"name":"calc","no_bundle":true,` +
		`"rules":[{"fallthrough":false,"globs":["**/*.wasm"],"type":"CompiledWasm"},{"fallthrough":false,"globs":["**/*.mjs","**/*.js"],"type":"ESModule"}],` +
		`"services":[{"binding":"MCPFN_TASKS","entrypoint":"McpfnTasks","service":"calc"}]}`
	if string(got) != want {
		t.Errorf("wrangler.toml:\n got %s\nwant %s", got, want)
	}
	if !strings.Contains(wranglerToml("calc"), "wrangler secret put MCPFN_STATE_KEY") || !strings.Contains(wranglerToml("calc"), "openssl rand -base64 32") {
		t.Error("wrangler.toml does not say how to set MCPFN_STATE_KEY")
	}
}

// TestWranglerDryRun: the pinned wrangler accepts the directory
// (`wrangler deploy --dry-run`, offline, no account) and finds the
// bindings.
func TestWranglerDryRun(t *testing.T) {
	t.Parallel()
	testenv.Workerd.SkipShort(t)
	root := repoDir(t)
	tool := func(args ...string) string {
		out, err := exec.Command(filepath.Join(root, args[0]), args[1:]...).Output()
		if err != nil {
			testenv.Workerd.Missing(t, fmt.Sprintf("%s: %v", strings.Join(args, " "), err))
		}
		return strings.TrimSpace(string(out))
	}
	node := tool("test/node/install.sh") // wrangler 4 needs Node 22
	wrangler := tool("test/workers/install.sh", "wrangler")
	dir, _ := examplePackage(t)
	out := t.TempDir()
	cmd := exec.Command(node, wrangler, "deploy", "--dry-run", "--outdir", out)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "WRANGLER_SEND_METRICS=false", "CI=1",
		"PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("wrangler deploy --dry-run: %v\n%s", err, b)
	}
	for _, s := range []string{"app.wasm", "compiled-wasm", "wasm_exec.js", "state.mjs", "env.MCPFN_STATE (McpfnState)", "env.MCPFN_TASKS (workers#McpfnTasks)"} {
		if !strings.Contains(string(b), s) {
			t.Errorf("wrangler's output lacks %q:\n%s", s, b)
		}
	}
	for _, f := range []string{"worker.mjs", "app.wasm"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("--outdir: %v", err)
		}
	}
}
