package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// package workers: a Worker directory for Cloudflare Workers. The user's
// main package is compiled to WebAssembly by the go command on PATH:
//
//	GOOS=js GOARCH=wasm CGO_ENABLED=0
//	go build -trimpath -ldflags='-s -w -buildid=' -buildvcs=false -o DIR/app.wasm PKG
//
// and written beside what runs it: Go's wasm_exec.js (from the GOROOT of
// that go command, which must match the wasm), the glue's *.mjs (from the
// version of github.com/mcpfn/mcpfn/adapters/workers/glue the user's module
// depends on), a wrangler.toml for `wrangler deploy` and a workerd.capnp
// for a local `workerd serve`. Every file depends on the sources and the Go
// release only, so the same sources give the same bytes; -dev-key adds a
// freshly generated MCPFN_STATE_KEY to workerd.capnp (and so makes it
// differ at every run).

const (
	// workersModule is the adapter's import path; the packaged program
	// must depend on it.
	workersModule = "github.com/mcpfn/mcpfn/adapters/workers"
	// gluePackage holds the JavaScript the Worker runs.
	gluePackage = workersModule + "/glue"
	// workersCompatibilityDate is the compatibility date of both
	// configurations: the one the glue is tested at.
	workersCompatibilityDate = "2026-11-01"
	// workersLocalAddr is the address of the local workerd's socket.
	workersLocalAddr = "127.0.0.1:8787"
)

// workersPackage is what package workers builds.
type workersPackage struct {
	// Pkg is the package to build, as the go command takes it; "" means ".".
	Pkg string
	// Out is the directory to write; "" means "dist". A relative name is
	// relative to Dir.
	Out string
	// Name is the Worker's name; "" means the package directory's base
	// name, reduced to what Cloudflare accepts.
	Name string
	// DevKey writes a generated MCPFN_STATE_KEY into workerd.capnp.
	DevKey bool
	// Dir is the directory the go command runs in; "" means the process's.
	Dir string
	// Env is the go command's environment; nil means the process's.
	Env []string
	// GoCmd is the go command; "" means "go", looked up on PATH.
	GoCmd string
	// Stderr receives the go command's diagnostics.
	Stderr io.Writer
}

// workersResult describes the directory written: the JSON document of
// package workers.
type workersResult struct {
	Dir     string   `json:"dir"`
	Package string   `json:"package"`
	Name    string   `json:"name"`
	Files   []string `json:"files"`
	// Wasm is the size of app.wasm.
	Wasm   int64 `json:"wasmSize"`
	DevKey bool  `json:"devKey"`
}

func (r *workersResult) writeText(w *bufio.Writer) {
	fmt.Fprintf(w, "wrote %s: %s as the Worker %s, app.wasm %s\n", oneLine(r.Dir), oneLine(r.Package), r.Name, byteSize(int(r.Wasm)))
	fmt.Fprintf(w, "files: %s\n", strings.Join(r.Files, " "))
	fmt.Fprintf(w, "run it locally: npx workerd serve %s\n", oneLine(filepath.Join(r.Dir, "workerd.capnp")))
	if r.DevKey {
		fmt.Fprintln(w, "workerd.capnp holds a generated MCPFN_STATE_KEY (-dev-key): do not deploy or share it")
	} else {
		fmt.Fprintln(w, "workerd.capnp has no MCPFN_STATE_KEY: package with -dev-key to generate one for local runs")
	}
	fmt.Fprintf(w, "deploy it: cd %s && npx wrangler secret put MCPFN_STATE_KEY && npx wrangler deploy\n", oneLine(r.Dir))
	fmt.Fprintln(w, "  (the secret's value: openssl rand -base64 32)")
}

// workerName reduces s to a Worker name: lower case letters, digits and
// single hyphens, at most 63 characters; "" if nothing is left.
func workerName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		} else {
			dash = true
		}
	}
	n := b.String()
	if len(n) > 63 {
		n = strings.TrimRight(n[:63], "-")
	}
	return n
}

// validWorkerName reports whether name is a Worker name as -name must
// give it.
func validWorkerName(name string) bool {
	return name != "" && workerName(name) == name
}

// packageWorkers builds p and writes its Worker directory.
func packageWorkers(ctx context.Context, p workersPackage) (*workersResult, error) {
	pkg := p.Pkg
	if pkg == "" {
		pkg = "."
	}
	if strings.Contains(pkg, "...") {
		return nil, fmt.Errorf("%s names several packages: give the one main package of the Worker", pkg)
	}
	if p.Name != "" && !validWorkerName(p.Name) {
		return nil, fmt.Errorf("-name %q is not a Worker name: lower case letters, digits and single hyphens, at most 63", p.Name)
	}
	out, goPath, env, err := buildSetup(p.Out, "dist", p.Dir, p.GoCmd, p.Env, "workers", "js", "wasm")
	if err != nil {
		return nil, err
	}
	stderr := p.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	goOut := func(dir string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, goPath, args...)
		cmd.Dir, cmd.Env = dir, env
		var errb bytes.Buffer
		cmd.Stderr = &errb
		b, err := cmd.Output()
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", fmt.Errorf("go %s:%s", strings.Join(args, " "), goDiagnostic(errb.Bytes(), err))
		}
		return strings.TrimSpace(string(b)), nil
	}

	// The package must be one main package, as js/wasm sees it.
	listed, err := goOut(p.Dir, "list", "-f", "{{.Name}}\t{{.ImportPath}}\t{{.Dir}}", pkg)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(listed, "\n")
	if len(lines) != 1 {
		return nil, fmt.Errorf("%s names %d packages: give the one main package of the Worker", pkg, len(lines))
	}
	f := strings.SplitN(lines[0], "\t", 3)
	if len(f) != 3 {
		return nil, fmt.Errorf("go list %s: unexpected output %q", pkg, lines[0])
	}
	name, importPath, pkgDir := f[0], f[1], f[2]
	if name != "main" {
		return nil, fmt.Errorf("%s is package %s, not a main package: give the directory of the Worker's package main", importPath, name)
	}
	deps, err := goOut(pkgDir, "list", "-deps", "-f", "{{.ImportPath}}", ".")
	if err != nil {
		return nil, err
	}
	if !slices.Contains(strings.Split(deps, "\n"), workersModule) {
		return nil, fmt.Errorf("%s does not import %s: a Worker's main calls workers.Serve (see docs/workers.md)", importPath, workersModule)
	}
	glueDir, err := goOut(pkgDir, "list", "-f", "{{.Dir}}", gluePackage)
	if err != nil {
		return nil, fmt.Errorf("the glue of the Workers adapter (%s) is not in %s's module: go get %s\n%w", gluePackage, importPath, workersModule, err)
	}
	goroot, err := goOut(p.Dir, "env", "GOROOT")
	if err != nil {
		return nil, err
	}
	workerNameV := p.Name
	if workerNameV == "" {
		workerNameV = workerName(filepath.Base(pkgDir))
		if workerNameV == "" {
			workerNameV = "mcpfn-worker"
		}
	}

	// Everything is read before anything is written: a failure leaves DIR
	// as it was.
	files := map[string][]byte{}
	wasmExec, err := os.ReadFile(filepath.Join(goroot, "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		return nil, fmt.Errorf("Go's wasm_exec.js: %w", err)
	}
	files["wasm_exec.js"] = wasmExec
	mjs, err := filepath.Glob(filepath.Join(glueDir, "*.mjs"))
	if err != nil {
		return nil, err
	}
	var modules []string
	for _, m := range mjs {
		b, err := os.ReadFile(m)
		if err != nil {
			return nil, err
		}
		files[filepath.Base(m)] = b
		modules = append(modules, filepath.Base(m))
	}
	if files["worker.mjs"] == nil {
		return nil, fmt.Errorf("%s has no worker.mjs: is %s a release of the Workers adapter?", glueDir, gluePackage)
	}
	// worker.mjs, the entry module, first.
	slices.SortFunc(modules, func(a, b string) int {
		if (a == "worker.mjs") != (b == "worker.mjs") {
			if a == "worker.mjs" {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var devKey string
	if p.DevKey {
		k := make([]byte, 32)
		rand.Read(k)
		devKey = base64.StdEncoding.EncodeToString(k)
	}
	files["wrangler.toml"] = []byte(wranglerToml(workerNameV))
	files["workerd.capnp"] = []byte(workerdCapnp(modules, devKey))

	tmp, err := os.MkdirTemp("", "mcpfn-package-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	wasmTmp := filepath.Join(tmp, "app.wasm")
	build := exec.CommandContext(ctx, goPath, "build", "-trimpath", "-ldflags=-s -w -buildid=", "-buildvcs=false", "-o", wasmTmp, ".")
	build.Dir, build.Env = pkgDir, env
	var buildErr bytes.Buffer
	build.Stdout, build.Stderr = stderr, &buildErr
	if err := build.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("go build %s for js/wasm:%s", importPath, goDiagnostic(buildErr.Bytes(), err))
	}
	stderr.Write(buildErr.Bytes()) // warnings of a build that succeeded
	wasm, err := os.ReadFile(wasmTmp)
	if err != nil {
		return nil, err
	}
	files["app.wasm"] = wasm

	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", out, err)
	}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := writeFileAtomic(filepath.Join(out, n), files[n]); err != nil {
			return nil, err
		}
	}
	return &workersResult{Dir: out, Package: importPath, Name: workerNameV, Files: names,
		Wasm: int64(len(wasm)), DevKey: p.DevKey}, nil
}

// wranglerToml is the Worker's wrangler configuration: the directory as
// it is (no bundling), its wasm and modules, the Durable Object namespace
// of the state stores and the service binding of task runs to the Worker
// itself.
func wranglerToml(name string) string {
	return `# wrangler.toml, written by mcpfn package workers.
#
# Before the first deploy, give the Worker the key that seals request state:
#   openssl rand -base64 32 | npx wrangler secret put MCPFN_STATE_KEY
# (or run ` + "`npx wrangler secret put MCPFN_STATE_KEY`" + ` and paste the output of
# ` + "`openssl rand -base64 32`" + `). Then: npx wrangler deploy
name = "` + name + `"
main = "worker.mjs"
compatibility_date = "` + workersCompatibilityDate + `"
no_bundle = true
find_additional_modules = true

[[rules]]
type = "CompiledWasm"
globs = ["**/*.wasm"]
fallthrough = false

[[rules]]
type = "ESModule"
globs = ["**/*.mjs", "**/*.js"]
fallthrough = false

# Sessions and tasks (MCPFN_STATE) live in Durable Objects.
[[durable_objects.bindings]]
name = "MCPFN_STATE"
class_name = "McpfnState"

[[migrations]]
tag = "v1"
new_sqlite_classes = ["McpfnState"]

# A task runs in a request of its own, through this Worker's McpfnTasks
# entry point.
[[services]]
binding = "MCPFN_TASKS"
service = "` + name + `"
entrypoint = "McpfnTasks"
`
}

// workerdCapnp is the configuration of a local workerd: the Worker's
// modules, in-memory Durable Object storage, the socket on
// workersLocalAddr and a network that may reach this machine's services.
// "# extra bindings" marks where the tests add text bindings; devKey, if
// not "", becomes the MCPFN_STATE_KEY binding.
func workerdCapnp(modules []string, devKey string) string {
	var b strings.Builder
	b.WriteString(`using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    # A local run may call services on this machine (an authorization
    # server on loopback); workerd's default network is public only.
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [ (name = "http", address = "` + workersLocalAddr + `", http = (), service = "main") ],
);

const worker :Workerd.Worker = (
  modules = [
`)
	for _, m := range modules {
		fmt.Fprintf(&b, "    (name = %q, esModule = embed %q),\n", m, m)
	}
	b.WriteString(`    (name = "wasm_exec.js", esModule = embed "wasm_exec.js"),
    (name = "app.wasm", wasm = embed "app.wasm"),
  ],
  compatibilityDate = "` + workersCompatibilityDate + `",
  globalOutbound = "internet",
  bindings = [
    # extra bindings
`)
	if devKey != "" {
		fmt.Fprintf(&b, "    (name = \"MCPFN_STATE_KEY\", text = %q),\n", devKey)
	}
	b.WriteString(`    (name = "MCPFN_LOCAL_ADDR", text = "` + workersLocalAddr + `"),
    (name = "MCPFN_STATE", durableObjectNamespace = "McpfnState"),
    (name = "MCPFN_TASKS", service = (name = "main", entrypoint = "McpfnTasks")),
  ],
  durableObjectNamespaces = [ (className = "McpfnState", uniqueKey = "mcpfn-state") ],
  durableObjectStorage = (inMemory = void),
);
`)
	return b.String()
}

// packageWorkersCmd runs package workers for the command line in cfg.
func packageWorkersCmd(ctx context.Context, cfg *config, e *env, stderr io.Writer, bad func(string) int) int {
	a := cfg.args
	if cfg.set["arch"] {
		return bad("-arch is a flag of package lambda")
	}
	if len(a) > 3 {
		return bad("package workers takes one PATH")
	}
	if cfg.name != "" && !validWorkerName(cfg.name) {
		return bad("-name must be lower case letters, digits and single hyphens (at most 63), not " + strconv.Quote(cfg.name))
	}
	p := workersPackage{Out: cfg.out, Name: cfg.name, DevKey: cfg.devKey, Dir: e.dir, Env: e.environ, Stderr: stderr}
	if len(a) == 3 {
		p.Pkg = a[2]
	}
	res, err := packageWorkers(ctx, p)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("timed out after %v (--timeout): %w", cfg.timeout, err)
		}
		return failure(stderr, err)
	}
	human := (e.tty || cfg.human) && !cfg.json
	doc, _ := json.Marshal(res)
	return writeOut(e.stdout, human, doc, func(w *bufio.Writer, _ json.RawMessage) { res.writeText(w) })
}
