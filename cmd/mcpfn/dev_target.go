package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// mcpfnModule is the root module's path: the adapters and deploy kits that
// name a package's target live under it.
const mcpfnModule = "github.com/mcpfn/mcpfn"

// targetImports are the packages that make a package a target's.
var targetImports = []struct{ path, target string }{
	{mcpfnModule + "/deploy/lambdaenv", "lambda"},
	{mcpfnModule + "/adapters/lambda", "lambda"},
	{mcpfnModule + "/deploy/gcfenv", "gcf"},
	{mcpfnModule + "/adapters/gcf", "gcf"},
	{mcpfnModule + "/adapters/workers", "workers"},
	{mcpfnModule + "/adapters/nethttp", "http"},
}

// goPackage is what go list says of the package mcpfn dev runs.
type goPackage struct {
	Dir        string
	ImportPath string
	Name       string
	Module     *struct {
		Path  string
		Dir   string
		GoMod string
	}
	Imports        []string
	Deps           []string
	GoFiles        []string
	IgnoredGoFiles []string
	Error          *struct{ Err string }
	// wasm: the package builds only for js/wasm (a Worker whose files
	// say //go:build js && wasm).
	wasm bool
}

// moduleDir is the root of the package's module: what the watcher
// watches.
func (p *goPackage) moduleDir() string {
	if p.Module != nil && p.Module.Dir != "" {
		return p.Module.Dir
	}
	return p.Dir
}

// lookGo returns the path of the go command on the PATH of environ.
func lookGo(environ []string) (string, error) {
	if p := lookPathIn(environ, "go"); p != "" {
		return p, nil
	}
	return "", errors.New("the go command is not on PATH: mcpfn dev builds with the Go toolchain; install it from https://go.dev/dl/")
}

// lookPathIn returns the path of the executable name on the PATH of
// environ, or "".
func lookPathIn(environ []string, name string) string {
	for _, dir := range filepath.SplitList(getenv(environ, "PATH")) {
		if dir == "" {
			continue
		}
		for _, ext := range []string{"", ".exe", ".cmd"} {
			p := filepath.Join(dir, name+ext)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && (fi.Mode()&0o111 != 0 || ext != "") {
				return p
			}
		}
	}
	return ""
}

// withEnv returns environ with the variables of set (NAME=value) replacing
// those of the same names, and those of unset removed.
func withEnv(environ []string, unset []string, set ...string) []string {
	drop := map[string]bool{}
	for _, k := range unset {
		drop[k] = true
	}
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		drop[k] = true
	}
	out := make([]string, 0, len(environ)+len(set))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}

// getenv returns the value of name in environ.
func getenv(environ []string, name string) string {
	v := ""
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// goCommand returns a go command run in dir, in its own process group
// (ctx's end stops the compilers too).
func goCommand(ctx context.Context, goPath, dir string, environ []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, goPath, args...)
	cmd.Dir = dir
	cmd.Env = environ
	devProcAttr(cmd)
	cmd.Cancel = func() error {
		devSignalGroup(cmd, false)
		return nil
	}
	return cmd
}

// listPackage runs go list on the package in dir, for this machine or
// (wasm) for js/wasm.
func listPackage(ctx context.Context, goPath, dir string, environ []string, wasm bool) (*goPackage, error) {
	env := environ
	if wasm {
		env = withEnv(environ, nil, "GOOS=js", "GOARCH=wasm")
	}
	cmd := goCommand(ctx, goPath, dir, env, "list", "-e", "-json=Dir,ImportPath,Name,Module,Imports,Deps,GoFiles,IgnoredGoFiles,Error", ".")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %v\n%s", dir, err, stderr.Bytes())
	}
	var p goPackage
	if err := json.Unmarshal(out, &p); err != nil {
		return nil, fmt.Errorf("go list in %s: %v", dir, err)
	}
	p.wasm = wasm
	return &p, nil
}

// findPackage returns the package in dir and its target (explicit, or
// the one its imports name). A package with files only js/wasm builds
// (//go:build js && wasm, as a Worker's main) is listed for js/wasm too.
func findPackage(ctx context.Context, goPath, dir string, environ []string, explicit string) (*goPackage, string, error) {
	p, err := listPackage(ctx, goPath, dir, environ, false)
	if err != nil {
		return nil, "", err
	}
	target, terr := detectTarget(p, explicit)
	if (terr != nil || target == "workers") && len(p.IgnoredGoFiles) > 0 {
		if w, err := listPackage(ctx, goPath, dir, environ, true); err == nil && len(w.GoFiles) > 0 {
			if wt, err := detectTarget(w, explicit); err == nil && wt == "workers" {
				return w, wt, nil
			}
		}
	}
	if len(p.GoFiles) == 0 && p.Error != nil {
		return nil, "", fmt.Errorf("no Go package in %s: %s", dir, p.Error.Err)
	}
	return p, target, terr
}

// detectTarget returns the target of p: the one explicit names, else the
// one its imports (or, failing those, its dependencies) name.
func detectTarget(p *goPackage, explicit string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	find := func(imports []string) ([]string, []string) {
		var targets, via []string
		for _, ti := range targetImports {
			if slices.Contains(imports, ti.path) && !slices.Contains(targets, ti.target) {
				targets = append(targets, ti.target)
				via = append(via, ti.path)
			}
		}
		return targets, via
	}
	targets, via := find(p.Imports)
	if len(targets) == 0 {
		targets, via = find(p.Deps)
	}
	switch len(targets) {
	case 0:
		return "", fmt.Errorf("%s imports none of mcpfn's adapters or deploy kits (deploy/lambdaenv, deploy/gcfenv, adapters/lambda, adapters/gcf, adapters/workers, adapters/nethttp): give -target lambda, gcf, workers or http", p.ImportPath)
	case 1:
		return targets[0], nil
	}
	return "", fmt.Errorf("%s imports %s, for several platforms (%s): choose one with -target", p.ImportPath, strings.Join(via, " and "), strings.Join(targets, ", "))
}

// checkPackageKind checks that p can run as target.
func checkPackageKind(p *goPackage, target string) error {
	switch {
	case target == "gcf":
		return nil // a function package, or a main that serves it
	case p.Name != "main":
		return fmt.Errorf("%s is package %s: a %s target runs a main package (a gcf one may be any package)", p.ImportPath, p.Name, target)
	case target == "workers" && !p.wasm && len(p.GoFiles) == 0:
		return fmt.Errorf("%s has no Go files for js/wasm", p.ImportPath)
	}
	return nil
}

// goBuild builds the package of s into out for this machine (env: the
// session's, without GOOS and GOARCH, plus extra), with the go command's
// output in diag.
func (s *devSession) goBuild(ctx context.Context, out string, diag io.Writer, extraEnv []string, args ...string) error {
	env := withEnv(s.environ, []string{"GOOS", "GOARCH"}, extraEnv...)
	cmd := goCommand(ctx, s.goPath, s.pkg.Dir, env, append(append([]string{"build", "-o", out}, args...), ".")...)
	cmd.Stdout, cmd.Stderr = diag, diag
	return cmd.Run()
}

// generatedDir is where the mains mcpfn dev generates sit in the user's
// module, as the go command sees it (through -overlay; nothing is written
// there). The underscore keeps ./... patterns away from it.
const generatedDir = "_mcpfn_dev"

// overlayBuild builds a main package generated by mcpfn dev (src) as a
// package of the user's module, in the directory generatedDir/name under
// the module's root, into out: through -overlay, so that the user's tree is
// not written to, and, outside a workspace, with a copy of go.mod and
// go.sum (-modfile) that -mod=mod completes with what the main imports
// beyond the user's packages (the Functions Framework's server, as Cloud
// Functions' build adds it).
func (s *devSession) overlayBuild(ctx context.Context, name, src, out string, diag io.Writer, extraEnv []string) error {
	root := s.pkg.moduleDir()
	if s.pkg.Module == nil || s.pkg.Module.GoMod == "" {
		return fmt.Errorf("%s is not in a module (go mod init)", s.pkg.Dir)
	}
	work := filepath.Join(s.tmp, "gen-"+name)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	mainFile := filepath.Join(work, "main.go")
	if err := os.WriteFile(mainFile, []byte(src), 0o644); err != nil {
		return err
	}
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{
		filepath.Join(root, generatedDir, name, "main.go"): mainFile,
	}})
	overlayFile := filepath.Join(work, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		return err
	}
	args := []string{"build", "-overlay", overlayFile, "-o", out}
	env := withEnv(s.environ, []string{"GOOS", "GOARCH"}, extraEnv...)
	if !s.inWorkspace(ctx) {
		modFile := filepath.Join(work, "dev.mod")
		if err := copyFile(s.pkg.Module.GoMod, modFile); err != nil {
			return err
		}
		sum := filepath.Join(root, "go.sum")
		if fileExists(sum) {
			if err := copyFile(sum, filepath.Join(work, "dev.sum")); err != nil {
				return err
			}
		} else {
			os.Remove(filepath.Join(work, "dev.sum"))
		}
		args = append(args, "-modfile", modFile, "-mod=mod")
	}
	args = append(args, "./"+generatedDir+"/"+name)
	cmd := goCommand(ctx, s.goPath, root, env, args...)
	cmd.Stdout, cmd.Stderr = diag, diag
	return cmd.Run()
}

// inWorkspace reports whether the go command builds the user's module in
// a workspace (go.work), where -modfile does not apply.
func (s *devSession) inWorkspace(ctx context.Context) bool {
	cmd := goCommand(ctx, s.goPath, s.pkg.moduleDir(), s.environ, "env", "GOWORK")
	out, err := cmd.Output()
	w := strings.TrimSpace(string(out))
	return err == nil && w != "" && w != "off"
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

// newDevKey returns a fresh signing key for MCPFN_STATE_KEY: standard
// base64 of 32 random bytes.
func newDevKey() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// freeLoopbackPort returns a loopback port that was free a moment ago.
func freeLoopbackPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// program is a process mcpfn dev runs (a server, workerd, dynalite), in a
// process group of its own, its output prefixed.
type program struct {
	cmd     *exec.Cmd
	out     *linePrefixer
	done    chan struct{} // closed when it has exited
	err     error         // how it exited, once done is closed
	stopped chan struct{} // closed by stop
	once    sync.Once
}

// startProgram starts a program with its output on w, each line prefixed.
// onExit, if not nil, runs when it exits without stop being called.
func startProgram(cmd *exec.Cmd, w io.Writer, prefix string, onExit func(error)) (*program, error) {
	p := &program{cmd: cmd, out: &linePrefixer{w: w, prefix: prefix}, done: make(chan struct{}), stopped: make(chan struct{})}
	if cmd.Stdout == nil {
		cmd.Stdout = p.out
	}
	if cmd.Stderr == nil {
		cmd.Stderr = p.out
	}
	devProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.err = cmd.Wait()
		devSignalGroup(cmd, false) // what it started
		p.out.Flush()
		close(p.done)
		select {
		case <-p.stopped:
		default:
			if onExit != nil {
				onExit(p.err)
			}
		}
	}()
	return p, nil
}

// stop ends the program: SIGTERM to its group, SIGKILL if it has not
// exited within two seconds. It waits until it has exited.
func (p *program) stop() {
	p.once.Do(func() { close(p.stopped) })
	select {
	case <-p.done:
		return
	default:
	}
	devSignalGroup(p.cmd, true)
	select {
	case <-p.done:
	case <-time.After(2 * time.Second):
		devSignalGroup(p.cmd, false)
		<-p.done
	}
}

// waitListening waits until addr accepts connections, the program exits
// or ctx ends.
func (p *program) waitListening(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, devStartTimeout)
	defer cancel()
	delay := 10 * time.Millisecond
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("it exited (%v) before it listened on %s", p.err, addr)
		case <-ctx.Done():
			return fmt.Errorf("it did not listen on %s: %w", addr, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(2*delay, 200*time.Millisecond)
	}
}

// proxied is a program serving on a loopback address, reached through a
// reverse proxy.
type proxied struct {
	prog  *program
	proxy *httputil.ReverseProxy
}

func newProxied(prog *program, addr string) *proxied {
	target := &url.URL{Scheme: "http", Host: addr}
	return &proxied{prog: prog, proxy: &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host // the server sees the Host the client used, as behind the platform's front end
		},
		// Each write of the server (an SSE event) is passed on at once.
		FlushInterval: -1,
		Transport:     &http.Transport{Proxy: nil, DisableCompression: true, MaxIdleConnsPerHost: 16},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadGateway)
			b, _ := json.Marshal(map[string]string{"message": "mcpfn dev: the server did not answer: " + err.Error()})
			w.Write(append(b, '\n'))
		},
	}}
}

// maxProxiedBody bounds a request body the proxy passes on.
const maxProxiedBody = 32 << 20

func (p *proxied) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Body != nil && r.Body != http.NoBody {
		// The body is read here, whole, rather than by the transport's
		// goroutine, which may read its end after this handler has
		// returned (when the server answers before the transport has
		// seen the end of the body): the connection's next request would
		// then be cut short (net/http forbids reading a body after the
		// handler has returned).
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxProxiedBody))
		if err != nil {
			http.Error(w, "mcpfn dev: reading the request body: "+err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	}
	p.proxy.ServeHTTP(w, r)
}

func (p *proxied) stop() {
	p.prog.stop()
	if t, ok := p.proxy.Transport.(*http.Transport); ok {
		t.CloseIdleConnections()
	}
}

// exitNotice returns what a program's unexpected exit prints.
func (s *devSession) exitNotice(what string) func(error) {
	return func(err error) {
		fmt.Fprintf(s.stderr, "mcpfn dev: the %s exited (%v); waiting for a change\n", what, err)
	}
}

// startServer runs a built server program (args and environment given)
// on a free loopback port, and returns it once it listens there.
func (s *devSession) startServer(ctx context.Context, what, prefix string, path string, args func(addr string) []string, env func(port int) []string) (devInstance, error) {
	port, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(path, args(addr)...)
	cmd.Dir = s.pkg.Dir
	cmd.Env = env(port)
	prog, err := startProgram(cmd, s.stderr, prefix, s.exitNotice(what))
	if err != nil {
		return nil, err
	}
	if err := prog.waitListening(ctx, addr); err != nil {
		prog.stop()
		return nil, fmt.Errorf("the %s: %w", what, err)
	}
	return newProxied(prog, addr), nil
}

// httpTarget runs a net/http main package with -addr.
type httpTarget struct{ s *devSession }

func (t *httpTarget) build(ctx context.Context, out string, diag io.Writer) error {
	return t.s.goBuild(ctx, out, diag, nil)
}

func (t *httpTarget) start(ctx context.Context, artefact string) (devInstance, error) {
	return t.s.startServer(ctx, "server", "[http] ", artefact,
		func(addr string) []string { return []string{"-addr", addr} },
		func(port int) []string { return withEnv(t.s.environ, nil, "PORT="+strconv.Itoa(port)) })
}

func (t *httpTarget) close() {}

// gcfTarget runs a Cloud Function through the Functions Framework's own
// server: a function package (its init registers the function) gets the
// main Cloud Functions' build generates; a main package runs as it is.
type gcfTarget struct {
	s   *devSession
	key string // MCPFN_STATE_KEY, the same for every build
}

func newGCFTarget(s *devSession) (devTarget, error) {
	return &gcfTarget{s: s, key: newDevKey()}, nil
}

// gcfMain is the main of a function package: what Cloud Functions' Go
// build adds (the Functions Framework's server, serving FUNCTION_TARGET),
// on loopback.
const gcfMain = `// Code generated by mcpfn dev; DO NOT EDIT.

// Command _mcpfn_dev serves the function package %[1]s as Cloud Functions
// do: through the Functions Framework's server, on PORT.
package main

import (
	"fmt"
	"os"

	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"

	_ %[1]q
)

func main() {
	if err := funcframework.StartHostPort("127.0.0.1", os.Getenv("PORT")); err != nil {
		fmt.Fprintln(os.Stderr, "functions framework:", err)
		os.Exit(1)
	}
}
`

func (t *gcfTarget) build(ctx context.Context, out string, diag io.Writer) error {
	if t.s.pkg.Name == "main" {
		return t.s.goBuild(ctx, out, diag, nil)
	}
	return t.s.overlayBuild(ctx, "gcf", fmt.Sprintf(gcfMain, t.s.pkg.ImportPath), out, diag, nil)
}

func (t *gcfTarget) start(ctx context.Context, artefact string) (devInstance, error) {
	return t.s.startServer(ctx, "Functions Framework server", "[gcf] ", artefact,
		func(string) []string { return nil },
		func(port int) []string {
			set := []string{"PORT=" + strconv.Itoa(port)}
			if getenv(t.s.environ, "FUNCTION_TARGET") == "" {
				set = append(set, "FUNCTION_TARGET=MCP")
			}
			if getenv(t.s.environ, "MCPFN_STATE_KEY") == "" {
				// As --set-secrets gives it from Secret Manager.
				set = append(set, "MCPFN_STATE_KEY="+t.key)
			}
			return withEnv(t.s.environ, nil, set...)
		})
}

func (t *gcfTarget) close() {}

// linePrefixer writes whole lines to w, each with a prefix.
type linePrefixer struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (l *linePrefixer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			if len(l.buf) > 64<<10 { // a very long line goes out in pieces
				l.emit(append(l.buf, '\n'))
				l.buf = l.buf[:0]
			}
			return len(p), nil
		}
		l.emit(l.buf[:i+1])
		l.buf = l.buf[i+1:]
	}
}

func (l *linePrefixer) emit(line []byte) {
	l.w.Write(append([]byte(l.prefix), line...))
}

// Flush writes a last, unterminated line.
func (l *linePrefixer) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > 0 {
		l.emit(append(l.buf, '\n'))
		l.buf = nil
	}
}
