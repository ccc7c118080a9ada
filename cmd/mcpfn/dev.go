package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// mcpfn dev [-addr HOST:PORT] [-target lambda|gcf|workers|http] [-dynalite] [DIR]
//
// runs the package in DIR (default: the current directory) on this machine
// behind its platform's own door, prints the one line
//
//	mcpfn dev: serving http://HOST:PORT/mcp
//
// on stdout once it serves, and rebuilds and restarts it when a Go file of
// its module (or go.mod, go.sum) changes. The targets:
//
//	lambda   the package built for this machine (-tags lambda.norpc), run by
//	         lambdalocal.Function (the Lambda Runtime API, responses streamed
//	         flush by flush) behind lambdalocal.Door (a Function URL, invoke
//	         mode RESPONSE_STREAM), with the environment the mcp-lambda
//	         Terraform module gives it: MCPFN_STREAMING=1, the signing keys in
//	         a secret (MCPFN_KEYS_SECRET_ID) served by a local Secrets Manager
//	         endpoint, the Invoke API of the function (for the Lambda task
//	         runner), dummy credentials; the sessions and tasks in the
//	         function's memory, or with -dynalite in a table of a local
//	         dynalite (or of the endpoint AWS_ENDPOINT_URL_DYNAMODB names).
//	gcf      the package (registering its function with the Functions
//	         Framework in init) served by functions-framework-go's own server,
//	         from a main generated as Cloud Functions' build does
//	         (FUNCTION_TARGET=MCP unless set, a generated MCPFN_STATE_KEY).
//	workers  mcpfn package workers -dev-key, run by workerd.
//	http     the main package run with -addr.
//
// The target is the one the package's imports name (deploy/lambdaenv or
// adapters/lambda; deploy/gcfenv or adapters/gcf; adapters/workers;
// adapters/nethttp), or -target. The server listens on -addr; the program
// behind it (gcf, workers, http) on a loopback port of its own, reached
// through a reverse proxy that passes each write on as it comes, so that
// the printed URL stays the same across restarts. New requests reach a new
// build as soon as it serves; the build it replaces finishes the requests
// it has (for up to ten seconds). A build that fails, or a program that
// fails to start (a Lambda function's init included), leaves the last good
// one serving. Ctrl-C (or SIGTERM) stops everything mcpfn dev started.

const devUsage = `usage: mcpfn dev [-addr HOST:PORT] [-target lambda|gcf|workers|http] [-dynalite] [DIR]`

// devDefaultAddr is the address mcpfn dev listens on unless -addr says
// otherwise: that of examples/calculator.
const devDefaultAddr = "127.0.0.1:8080"

// devStartTimeout bounds the start of a build: a function's init, a
// program's first listen.
const devStartTimeout = 60 * time.Second

// devOptions is the command line of mcpfn dev.
type devOptions struct {
	addr     string
	target   string
	dynalite bool
	dir      string
}

// parseDevArgs reads the command line after "dev": flags before or after
// DIR.
func parseDevArgs(argv []string) (*devOptions, error) {
	o := &devOptions{}
	fs := flag.NewFlagSet("mcpfn dev", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.addr, "addr", devDefaultAddr, "")
	fs.StringVar(&o.target, "target", "", "")
	fs.BoolVar(&o.dynalite, "dynalite", false, "")
	var dirs []string
	for {
		if err := fs.Parse(argv); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		dirs = append(dirs, fs.Arg(0))
		argv = fs.Args()[1:]
	}
	if len(dirs) > 1 {
		return nil, fmt.Errorf("dev takes one DIR, not %s", strings.Join(dirs, " "))
	}
	o.dir = "."
	if len(dirs) == 1 {
		o.dir = dirs[0]
	}
	switch o.target {
	case "", "lambda", "gcf", "workers", "http":
	default:
		return nil, fmt.Errorf("-target must be lambda, gcf, workers or http, not %q", o.target)
	}
	if o.dynalite && o.target != "" && o.target != "lambda" {
		return nil, errors.New("-dynalite is for -target lambda")
	}
	if _, _, err := net.SplitHostPort(o.addr); err != nil {
		return nil, fmt.Errorf("-addr must be HOST:PORT (127.0.0.1:8080, or port 0 for a free one): %v", err)
	}
	return o, nil
}

// devCmd runs mcpfn dev until ctx ends (Ctrl-C) or SIGTERM.
func devCmd(ctx context.Context, argv []string, e *env) int {
	stderr := &lockedWriter{w: e.stderr}
	o, err := parseDevArgs(argv)
	if err != nil {
		fmt.Fprintln(stderr, "mcpfn:", err)
		fmt.Fprintln(stderr, devUsage)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	s := &devSession{opts: o, stdout: e.stdout, stderr: stderr, environ: e.environ, stopping: make(chan struct{})}
	if s.environ == nil {
		s.environ = os.Environ()
	}
	dir := o.dir
	if !filepath.IsAbs(dir) && e.dir != "" {
		dir = filepath.Join(e.dir, dir)
	}
	if err := s.setup(ctx, dir); err != nil {
		s.cleanup()
		fmt.Fprintln(stderr, "mcpfn dev:", err)
		return exitFailure
	}
	defer s.cleanup()
	return s.run(ctx)
}

// devTarget builds and starts one platform's program.
type devTarget interface {
	// build compiles the package into an artefact (a file or directory)
	// named out; the go command's diagnostics go to diag.
	build(ctx context.Context, out string, diag io.Writer) error
	// start runs an artefact and returns once it serves.
	start(ctx context.Context, artefact string) (devInstance, error)
	// close stops what the target keeps across builds.
	close()
}

// devInstance is a running build.
type devInstance interface {
	http.Handler
	// stop stops it and waits until it has stopped.
	stop()
}

// devSession is one run of mcpfn dev.
type devSession struct {
	opts    *devOptions
	stdout  io.Writer
	stderr  io.Writer
	environ []string

	pkg     *goPackage
	kind    string // lambda, gcf, workers, http
	tmp     string // builds and generated files, removed at the end
	goPath  string
	target  devTarget
	ln      net.Listener
	srv     *http.Server
	url     string
	current atomic.Pointer[devRunning]
	served  sync.WaitGroup
	// retiring are the replaced builds still finishing their requests;
	// stopping ends their wait.
	retiring sync.WaitGroup
	stopping chan struct{}
}

// devDrainTimeout bounds how long a replaced build goes on serving the
// requests it had (an open SSE stream, a long tool call) before it is
// stopped.
const devDrainTimeout = 10 * time.Second

// devRunning is a build that serves, its artefact, and the requests it
// serves.
type devRunning struct {
	inst     devInstance
	artefact string

	mu      sync.Mutex
	n       int           // requests in progress
	drained chan struct{} // closed when n drops to 0, once asked for
}

func (r *devRunning) enter() {
	r.mu.Lock()
	r.n++
	r.mu.Unlock()
}

func (r *devRunning) leave() {
	r.mu.Lock()
	r.n--
	if r.n == 0 && r.drained != nil {
		close(r.drained)
		r.drained = nil
	}
	r.mu.Unlock()
}

// retire waits until the requests in progress are done (at most
// devDrainTimeout, or until stop is closed), then stops the build and
// removes its artefact.
func (r *devRunning) retire(stop <-chan struct{}) {
	r.mu.Lock()
	var drained chan struct{}
	if r.n > 0 {
		drained = make(chan struct{})
		r.drained = drained
	}
	r.mu.Unlock()
	if drained != nil {
		select {
		case <-drained:
		case <-stop:
		case <-time.After(devDrainTimeout):
		}
	}
	r.inst.stop()
	os.RemoveAll(r.artefact)
}

// setup finds the package and its target, listens, and prepares the
// target.
func (s *devSession) setup(ctx context.Context, dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s is not a directory: give the directory of the package to run", dir)
	}
	if s.goPath, err = lookGo(s.environ); err != nil {
		return err
	}
	if s.pkg, s.kind, err = findPackage(ctx, s.goPath, abs, s.environ, s.opts.target); err != nil {
		return err
	}
	fmt.Fprintf(s.stderr, "mcpfn dev: %s (%s) in %s\n", s.pkg.ImportPath, s.kind, s.pkg.Dir)
	if s.opts.dynalite && s.kind != "lambda" {
		return fmt.Errorf("-dynalite is for Lambda functions; %s is a %s package", s.pkg.ImportPath, s.kind)
	}
	if err := checkPackageKind(s.pkg, s.kind); err != nil {
		return err
	}
	if s.tmp, err = os.MkdirTemp("", "mcpfn-dev-"); err != nil {
		return err
	}
	if s.ln, err = net.Listen("tcp", s.opts.addr); err != nil {
		return fmt.Errorf("-addr %s: %w", s.opts.addr, err)
	}
	s.url = "http://" + displayAddr(s.ln.Addr()) + "/mcp"
	switch s.kind {
	case "lambda":
		s.target, err = newLambdaTarget(ctx, s)
	case "gcf":
		s.target, err = newGCFTarget(s)
	case "workers":
		s.target, err = newWorkersTarget(s)
	case "http":
		s.target = &httpTarget{s: s}
	}
	return err
}

// displayAddr is the host:port of a listener as a client on this machine
// reaches it: an unspecified address (":8080") is reached on loopback.
func displayAddr(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// ServeHTTP passes a request to the build that serves.
func (s *devSession) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for {
		cur := s.current.Load()
		if cur == nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"message":"mcpfn dev: no build serves yet: see the errors mcpfn dev printed"}`+"\n")
			return
		}
		cur.enter()
		if s.current.Load() != cur {
			cur.leave() // replaced meanwhile: the new build serves it
			continue
		}
		defer cur.leave()
		cur.inst.ServeHTTP(w, r)
		return
	}
}

// run serves, builds, and rebuilds on changes until ctx ends.
func (s *devSession) run(ctx context.Context) int {
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	s.served.Go(func() { s.srv.Serve(s.ln) })
	root := s.pkg.moduleDir()
	snap := takeSnapshot(root)
	fmt.Fprintln(s.stderr, "mcpfn dev: building")
	s.rebuild(ctx, 1)
	changes := make(chan []string)
	go watch(ctx, root, snap, changes)
	for n := 2; ; n++ {
		select {
		case <-ctx.Done():
			fmt.Fprintln(s.stderr, "mcpfn dev: stopping")
			return exitOK
		case files := <-changes:
			names := make([]string, len(files))
			for i, f := range files {
				names[i] = relPath(root, f)
			}
			if len(names) > 3 {
				names = append(names[:3], fmt.Sprintf("and %d more", len(files)-3))
			}
			fmt.Fprintf(s.stderr, "mcpfn dev: %s changed: rebuilding\n", strings.Join(names, ", "))
			s.rebuild(ctx, n)
		}
	}
}

// rebuild builds and starts build n; on success it replaces the build
// that served, else that one goes on serving.
func (s *devSession) rebuild(ctx context.Context, n int) {
	out := filepath.Join(s.tmp, fmt.Sprintf("build-%d", n))
	var diag bytes.Buffer
	start := time.Now()
	err := s.target.build(ctx, out, &diag)
	if ctx.Err() != nil {
		return
	}
	prev := s.current.Load()
	keep := "waiting for a change"
	if prev != nil {
		keep = "still serving the last good build; waiting for a change"
	}
	if err != nil {
		s.stderr.Write(diag.Bytes())
		fmt.Fprintf(s.stderr, "mcpfn dev: build failed: %v; %s\n", err, keep)
		os.RemoveAll(out)
		return
	}
	built := time.Since(start)
	inst, err := s.target.start(ctx, out)
	if err != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(s.stderr, "mcpfn dev: the build did not start: %v; %s\n", err, keep)
		}
		os.RemoveAll(out)
		return
	}
	old := s.current.Swap(&devRunning{inst: inst, artefact: out})
	if old == nil {
		fmt.Fprintf(s.stdout, "mcpfn dev: serving %s\n", s.url)
		return
	}
	// New requests reach the new build; the old one finishes those it has.
	s.retiring.Go(func() { old.retire(s.stopping) })
	fmt.Fprintf(s.stderr, "mcpfn dev: restarted (built in %v)\n", built.Round(time.Millisecond))
}

// cleanup stops the server, the build that serves and the target, and
// removes the temporary directory.
func (s *devSession) cleanup() {
	if s.stopping != nil {
		close(s.stopping)
	}
	s.retiring.Wait()
	if cur := s.current.Swap(nil); cur != nil {
		cur.inst.stop() // ends the requests it serves
	}
	if s.srv != nil {
		s.srv.Close()
		s.served.Wait()
	} else if s.ln != nil {
		s.ln.Close()
	}
	if s.target != nil {
		s.target.close()
	}
	if s.tmp != "" {
		os.RemoveAll(s.tmp)
	}
}
