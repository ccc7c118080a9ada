package lambdalocal

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Runtime API paths and the content type of a streamed HTTP response
// (https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html,
// https://docs.aws.amazon.com/lambda/latest/dg/runtimes-custom.html#runtimes-custom-response-streaming).
const (
	runtimePrefix    = "/2018-06-01/runtime/"
	errorTypeTrailer = "Lambda-Runtime-Function-Error-Type"
	errorBodyTrailer = "Lambda-Runtime-Function-Error-Body"

	// StreamingContentType is the content type of a response that the
	// function streams as an HTTP response: a JSON prelude (status,
	// headers, cookies), 8 NUL bytes, then the body.
	StreamingContentType = "application/vnd.awslambda.http-integration-response"
)

// Defaults of Config.
const (
	// DefaultName is the function's name when Config.Name is empty.
	DefaultName = "function"
	// DefaultTimeout is the function timeout when Config.Timeout is zero:
	// that of the mcp-lambda Terraform module.
	DefaultTimeout = 60 * time.Second
	// DefaultRegion is AWS_REGION when Config.Env does not set it.
	DefaultRegion = "us-east-1"
	// InitTimeout bounds a new process's init, from its start to its first
	// request for an event: Lambda's limit on the init phase of an
	// on-demand function, which the function timeout does not include.
	InitTimeout = 10 * time.Second
)

// timeoutGrace is how long an execution environment that runs several
// invocations at once may go on with one past its deadline before it is
// stopped: the function's context ends at the deadline, and a handler that
// honours it finishes within this time.
const timeoutGrace = 2 * time.Second

// maxErrorPayload bounds the payload of an invocation error or an init
// error.
const maxErrorPayload = 1 << 20

// Errors of Invoke.
var (
	// ErrTimeout is returned (wrapped) when the invocation ran out of the
	// function timeout.
	ErrTimeout = errors.New("lambdalocal: function timed out")
	// ErrRuntimeExited is returned (wrapped) when the function's process
	// exited during the invocation, as Lambda's Runtime.ExitError.
	ErrRuntimeExited = errors.New("lambdalocal: the function's process exited during the invocation")
	// ErrClosed is returned by Invoke and Warm after Close.
	ErrClosed = errors.New("lambdalocal: function closed")
)

// Config configures a Function.
type Config struct {
	// Bootstrap is the function's executable, as the provided.al2023
	// runtime runs it: for Go, a main package built with -tags
	// lambda.norpc for this machine. Required.
	Bootstrap string
	// Name is the function's name (AWS_LAMBDA_FUNCTION_NAME, and the last
	// part of the ARN of its invocations); "" means the
	// AWS_LAMBDA_FUNCTION_NAME of Env, else DefaultName.
	Name string
	// Env is the function's environment. The variables Lambda sets are
	// added to it (see Function); those Lambda reserves are replaced.
	Env []string
	// Sandboxes is how many execution environments (processes) may run at
	// once; 0 means 1. Each starts with its first invocation, as on
	// Lambda, and an invocation takes the lowest-numbered one with room,
	// so that a warm one serves before a new one starts.
	Sandboxes int
	// Concurrency is how many invocations one execution environment runs
	// at once; 0 means 1, the one-at-a-time of on-demand Lambda. More is
	// the multi-concurrency of Lambda Managed Instances: the process is
	// told AWS_LAMBDA_MAX_CONCURRENCY, and aws-lambda-go then asks for
	// that many invocations at once. The invocations of one process share
	// its memory (in-memory sessions, caches).
	Concurrency int
	// Timeout is the function timeout; 0 means DefaultTimeout. At the
	// deadline the client's response ends (504 Gateway Timeout if none was
	// sent, cut short otherwise), and the process is stopped, as Lambda
	// stops a sandbox whose invocation timed out: at once with Concurrency
	// 1, after a grace of two seconds with more (the other invocations of
	// the process end with it). A new process's init is not counted: it
	// has InitTimeout.
	Timeout time.Duration
	// Output receives what the processes write on stdout and stderr, line
	// by line, each line prefixed "[fn] " ("[fn N] " with several
	// sandboxes). Nil discards it. Writes come from several goroutines:
	// Output must be safe for concurrent use.
	Output io.Writer
	// Freeze stops (SIGSTOP) a process while it waits for an invocation,
	// from its GET .../invocation/next until an invocation comes (SIGCONT),
	// as Lambda freezes a sandbox once the function asks for the next
	// invocation: what the function left for after its response and had
	// not done by then stays undone until its next invocation. Linux only,
	// with Concurrency 1 (NewFunction refuses it otherwise).
	Freeze bool
	// OnFreeze, when set, is called once a process is stopped, with its
	// sandbox's number (from 0), its pid and how many invocations it has
	// received.
	OnFreeze func(sandbox, pid, served int)
	// Logger receives the Function's own diagnostics. Nil discards them.
	Logger *slog.Logger
}

// Function runs a Lambda function (a provided.al2023 bootstrap) on this
// machine as Lambda runs it: it serves the Lambda Runtime API on loopback,
// one endpoint per process, starts the bootstrap with AWS_LAMBDA_RUNTIME_API
// pointing there, hands it events, and hands its responses back as they
// arrive, so that a streamed response is seen chunk by chunk. Besides
// Config.Env, a process gets what Lambda sets: AWS_LAMBDA_RUNTIME_API,
// LAMBDA_TASK_ROOT (the bootstrap's directory, also its working directory),
// _HANDLER, AWS_LAMBDA_FUNCTION_NAME, AWS_LAMBDA_FUNCTION_VERSION,
// AWS_LAMBDA_FUNCTION_MEMORY_SIZE, AWS_REGION and AWS_DEFAULT_REGION (unless
// Config.Env sets them), and AWS_LAMBDA_MAX_CONCURRENCY with
// Config.Concurrency above 1.
//
// A process whose invocation times out, or (with Config.Concurrency 1)
// whose client goes away mid-invocation, is stopped, and the next
// invocation starts a new one; so is a process that exits. With several
// invocations per process, a client that goes away leaves the invocation
// to finish, its response discarded.
//
// A Function is safe for concurrent use.
type Function struct {
	cfg    Config
	arn    string
	log    *slog.Logger
	prefix string

	mu        sync.Mutex
	sandboxes []*sandbox
	freed     chan struct{} // closed and replaced when a slot frees
	closed    bool
}

// sandbox is one execution environment: at most one process at a time,
// running up to Config.Concurrency invocations.
type sandbox struct {
	id  int
	f   *Function
	out *lineWriter

	// Guarded by f.mu.
	busy int      // invocations holding a slot
	proc *process // nil when no process runs
}

// process is one run of the bootstrap, with its Runtime API endpoint.
type process struct {
	s     *sandbox
	cmd   *exec.Cmd
	srv   *http.Server
	next  chan *invocation // GET .../invocation/next receives from it
	ready chan struct{}    // closed at the first GET .../invocation/next
	done  chan struct{}    // closed when the process has exited

	readyOnce sync.Once
	initErr   string // the payload of POST .../init/error, guarded by mu
	mu        sync.Mutex
	invs      map[string]*invocation // the invocations in progress
	exit      error                  // how it exited, once done is closed
	served    atomic.Int64           // invocations handed to it
}

// freeze stops the process, and reports whether it did.
func (p *process) freeze() bool {
	pid := p.cmd.Process.Pid
	if err := stopPID(pid); err != nil {
		p.s.f.log.Warn("could not freeze the sandbox", "sandbox", p.s.id, "pid", pid, "err", err)
		return false
	}
	p.s.f.log.Debug("sandbox frozen", "sandbox", p.s.id, "pid", pid)
	if fn := p.s.f.cfg.OnFreeze; fn != nil {
		fn(p.s.id, pid, int(p.served.Load()))
	}
	return true
}

// thaw continues the process freeze stopped.
func (p *process) thaw() {
	continuePID(p.cmd.Process.Pid)
	p.s.f.log.Debug("sandbox thawed", "sandbox", p.s.id)
}

// invocation is one invocation in progress.
type invocation struct {
	id       string
	event    []byte
	deadline time.Time
	result   chan *liveResponse // what the function POSTed (one value)
	proc     *process
}

// liveResponse is the function's response as it arrives on the Runtime
// API.
type liveResponse struct {
	contentType string
	fnError     bool // POSTed to .../error
	body        io.Reader
	trailer     func() http.Header
	// release lets the Runtime API answer the function's POST; call once,
	// when done with body.
	release func()
}

// NewFunction returns a Function running cfg.Bootstrap. It starts no
// process: the first invocation (or Warm) does. It returns an error if
// the bootstrap is not a file.
func NewFunction(cfg Config) (*Function, error) {
	if cfg.Bootstrap == "" {
		return nil, errors.New("lambdalocal: Config.Bootstrap is required")
	}
	abs, err := filepath.Abs(cfg.Bootstrap)
	if err != nil {
		return nil, fmt.Errorf("lambdalocal: bootstrap: %w", err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("lambdalocal: bootstrap: %w", err)
	} else if fi.IsDir() {
		return nil, fmt.Errorf("lambdalocal: bootstrap %s is a directory", abs)
	}
	cfg.Bootstrap = abs
	if cfg.Name == "" {
		cfg.Name = envValue(cfg.Env, "AWS_LAMBDA_FUNCTION_NAME", DefaultName)
	}
	cfg.Sandboxes = max(cfg.Sandboxes, 1)
	cfg.Concurrency = max(cfg.Concurrency, 1)
	if cfg.Freeze && cfg.Concurrency > 1 {
		return nil, errors.New("lambdalocal: Config.Freeze needs Concurrency 1: a process running several invocations is never idle as a whole")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Output == nil {
		cfg.Output = io.Discard
	}
	f := &Function{cfg: cfg, log: cfg.Logger, freed: make(chan struct{})}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	f.arn = "arn:aws:lambda:" + envValue(cfg.Env, "AWS_REGION", DefaultRegion) + ":123456789012:function:" + cfg.Name
	for i := range cfg.Sandboxes {
		prefix := "[fn] "
		if cfg.Sandboxes > 1 {
			prefix = fmt.Sprintf("[fn %d] ", i)
		}
		f.sandboxes = append(f.sandboxes, &sandbox{id: i, f: f, out: &lineWriter{w: cfg.Output, prefix: prefix}})
	}
	return f, nil
}

// Warm starts the first execution environment, if it is not running, and
// waits until its process has initialised (it asks for its first event),
// as a provisioned environment would be. It returns an error, with the
// init error the function reported if any, when the process exits first;
// and ctx's error when ctx ends first.
func (f *Function) Warm(ctx context.Context) error {
	s := f.sandboxes[0]
	proc, err := s.ensureProcess()
	if err != nil {
		return err
	}
	select {
	case <-proc.ready:
		return nil
	case <-proc.done:
		proc.mu.Lock()
		msg := proc.initErr
		proc.mu.Unlock()
		if msg != "" {
			return fmt.Errorf("lambdalocal: the function failed at init (%v): %s", proc.exit, msg)
		}
		return fmt.Errorf("lambdalocal: the function's process exited at init: %v", proc.exit)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// acquire takes an invocation slot on the lowest-numbered sandbox with
// room, waiting for one until ctx ends.
func (f *Function) acquire(ctx context.Context) (*sandbox, error) {
	for {
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			return nil, ErrClosed
		}
		for _, s := range f.sandboxes {
			if s.busy < f.cfg.Concurrency {
				s.busy++
				f.mu.Unlock()
				return s, nil
			}
		}
		freed := f.freed
		f.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, fmt.Errorf("lambdalocal: waiting for a free sandbox: %w", ctx.Err())
		}
	}
}

// release returns a slot of s.
func (f *Function) release(s *sandbox) {
	f.mu.Lock()
	s.busy--
	close(f.freed)
	f.freed = make(chan struct{})
	f.mu.Unlock()
}

// multi reports whether a process runs several invocations at once.
func (f *Function) multi() bool { return f.cfg.Concurrency > 1 }

// Invoke runs one invocation with event (the integration's JSON) and
// returns once the function has started its response, or reported an
// error (the error payload is then the response, as Lambda's Invoke API
// answers it). The caller must close the response's Body. The invocation
// ends at the function timeout (ErrTimeout), or when ctx ends; a body read
// then fails. Invoke waits for a free slot while every sandbox is busy.
func (f *Function) Invoke(ctx context.Context, event []byte) (*Response, error) {
	s, err := f.acquire(ctx)
	if err != nil {
		return nil, err
	}
	proc, err := s.ensureProcess()
	if err != nil {
		f.release(s)
		return nil, err
	}
	// A new process's init has its own bound, as on Lambda, where the
	// function timeout starts with the invocation: a slow start does not
	// time the first invocation out.
	select {
	case <-proc.ready:
	case <-proc.done:
		f.release(s)
		return nil, fmt.Errorf("%w (during its init): %v", ErrRuntimeExited, proc.exit)
	case <-time.After(InitTimeout):
		f.log.WarnContext(ctx, "function did not finish its init in time; stopping it", "sandbox", s.id, "init_timeout", InitTimeout)
		s.kill(proc)
		f.release(s)
		return nil, fmt.Errorf("%w: the function did not ask for an event within its init timeout %v", ErrTimeout, InitTimeout)
	case <-ctx.Done():
		f.release(s)
		return nil, ctx.Err()
	}
	inv := &invocation{
		id: newUUID(), event: event, deadline: time.Now().Add(f.cfg.Timeout),
		result: make(chan *liveResponse, 1), proc: proc,
	}
	proc.add(inv)
	// finish ends the invocation: it forgets it and frees its slot.
	finish := func() {
		proc.remove(inv)
		f.release(s)
	}
	timer := time.NewTimer(time.Until(inv.deadline))
	select {
	case proc.next <- inv:
	case <-proc.done:
		timer.Stop()
		finish()
		return nil, fmt.Errorf("%w (before it asked for the event): %v", ErrRuntimeExited, proc.exit)
	case <-timer.C:
		// A process that does not ask for events in time is stuck in its
		// init, or in the invocations it runs already.
		f.log.WarnContext(ctx, "function did not ask for the event in time; stopping it", "sandbox", s.id, "request_id", inv.id)
		s.kill(proc)
		finish()
		return nil, fmt.Errorf("%w: the function did not ask for the event within %v", ErrTimeout, f.cfg.Timeout)
	case <-ctx.Done():
		timer.Stop()
		finish()
		return nil, ctx.Err()
	}
	var live *liveResponse
	select {
	case live = <-inv.result:
	case <-proc.done:
		timer.Stop()
		finish()
		return nil, fmt.Errorf("%w: %v", ErrRuntimeExited, proc.exit)
	case <-timer.C:
		f.log.WarnContext(ctx, "function timed out", "sandbox", s.id, "request_id", inv.id, "timeout", f.cfg.Timeout)
		f.abandon(s, inv, true, finish)
		return nil, fmt.Errorf("%w after %v", ErrTimeout, f.cfg.Timeout)
	case <-ctx.Done():
		timer.Stop()
		f.abandon(s, inv, false, finish)
		return nil, ctx.Err()
	}

	// The body arrives while the caller reads it, through a pipe: one
	// goroutine copies it from the function's POST, and the invocation
	// ends when that POST has been read to its end (or failed), whatever
	// became of the caller: then the slot is free before the caller sees
	// the end of the body.
	pr, pw := io.Pipe()
	copied := make(chan struct{})
	go func() {
		_, err := io.Copy(pw, live.body)
		if errors.Is(err, io.ErrClosedPipe) || errors.Is(err, errAbandoned) {
			// The caller is gone: read the rest, so that the function
			// finishes its response as it would on Lambda.
			_, err = io.Copy(io.Discard, live.body)
		}
		live.release()
		close(copied)
		finish()
		pw.CloseWithError(err)
	}()
	go func() {
		defer timer.Stop()
		timedOut := false
		select {
		case <-copied:
			return
		case <-timer.C:
			timedOut = true
		case <-ctx.Done():
		}
		select {
		case <-copied:
			// The response was whole before the deadline or the end of
			// ctx (which ends when the caller is done with it).
			return
		default:
		}
		switch {
		case timedOut:
			f.log.WarnContext(ctx, "function timed out while streaming", "sandbox", s.id, "request_id", inv.id, "timeout", f.cfg.Timeout)
			pw.CloseWithError(fmt.Errorf("%w after %v", ErrTimeout, f.cfg.Timeout))
			s.stopOverdue(proc, copied)
		case !f.multi():
			f.log.DebugContext(ctx, "client gone while streaming; stopping the function", "sandbox", s.id, "request_id", inv.id)
			s.kill(proc)
		default:
			pr.CloseWithError(errAbandoned)
			select {
			case <-copied:
			case <-timer.C:
				s.stopOverdue(proc, copied)
			}
		}
	}()
	return &Response{
		ContentType:   live.contentType,
		Body:          pr,
		Trailer:       live.trailer,
		FunctionError: live.fnError,
	}, nil
}

// errAbandoned ends the copy of a response whose caller went away.
var errAbandoned = errors.New("lambdalocal: the caller abandoned the response")

// abandon ends an invocation whose response has not started: timedOut
// says whether the function timed out (else the caller went away). A
// process running one invocation at a time is stopped; one running
// several is left to finish it, its response discarded, and stopped if it
// is still at it timeoutGrace after the deadline. finish runs once the
// invocation is over.
func (f *Function) abandon(s *sandbox, inv *invocation, timedOut bool, finish func()) {
	proc := inv.proc
	if !f.multi() {
		s.kill(proc)
		finish()
		return
	}
	go func() {
		defer finish()
		grace := time.NewTimer(time.Until(inv.deadline) + timeoutGrace)
		defer grace.Stop()
		if timedOut {
			grace.Reset(timeoutGrace)
		}
		select {
		case live := <-inv.result:
			drained := make(chan struct{})
			go func() {
				io.Copy(io.Discard, live.body)
				live.release()
				close(drained)
			}()
			select {
			case <-drained:
			case <-grace.C:
				f.log.Warn("function still running past its deadline; stopping it", "sandbox", s.id, "request_id", inv.id)
				s.kill(proc)
				<-drained
			}
		case <-proc.done:
		case <-grace.C:
			f.log.Warn("function still running past its deadline; stopping it", "sandbox", s.id, "request_id", inv.id)
			s.kill(proc)
		}
	}()
}

// stopOverdue stops proc, whose invocation timed out: at once when it runs
// one invocation at a time; after timeoutGrace, unless copied (the end of
// the invocation's response) comes first, when it runs several.
func (s *sandbox) stopOverdue(proc *process, copied <-chan struct{}) {
	if s.f.multi() {
		select {
		case <-copied:
			return
		case <-time.After(timeoutGrace):
			s.f.log.Warn("function still running past its deadline; stopping it", "sandbox", s.id)
		}
	}
	s.kill(proc)
	<-copied
}

// ensureProcess starts the bootstrap if it is not running.
func (s *sandbox) ensureProcess() (*process, error) {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, ErrClosed
	}
	if s.proc != nil {
		return s.proc, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("lambdalocal: runtime API listener: %w", err)
	}
	addr := ln.Addr().String()
	cmd := exec.Command(f.cfg.Bootstrap)
	cmd.Dir = filepath.Dir(f.cfg.Bootstrap)
	cmd.Env = f.runtimeEnv(addr)
	cmd.Stdout, cmd.Stderr = s.out, s.out
	setProcAttr(cmd)
	proc := &process{
		s: s, cmd: cmd, next: make(chan *invocation), ready: make(chan struct{}),
		done: make(chan struct{}), invs: map[string]*invocation{},
	}
	proc.srv = &http.Server{Handler: proc, ErrorLog: slog.NewLogLogger(f.log.Handler(), slog.LevelDebug)}
	if err := cmd.Start(); err != nil {
		ln.Close()
		return nil, fmt.Errorf("lambdalocal: starting the bootstrap: %w", err)
	}
	go proc.srv.Serve(ln)
	s.proc = proc
	f.log.Debug("bootstrap started", "sandbox", s.id, "pid", cmd.Process.Pid, "runtime_api", addr)
	go func() {
		err := cmd.Wait()
		killGroup(cmd) // what the bootstrap started
		proc.exit = err
		proc.srv.Close()
		s.out.Flush()
		f.mu.Lock()
		if s.proc == proc {
			s.proc = nil
		}
		f.mu.Unlock()
		close(proc.done)
		f.log.Debug("bootstrap exited", "sandbox", s.id, "err", err)
	}()
	return proc, nil
}

// kill stops proc (and what it started) and waits until it has exited.
func (s *sandbox) kill(proc *process) {
	select {
	case <-proc.done:
		return
	default:
	}
	// Detach it first: an invocation that takes the sandbox from now on
	// starts a new process instead of meeting this one as it dies.
	s.f.mu.Lock()
	if s.proc == proc {
		s.proc = nil
	}
	s.f.mu.Unlock()
	killGroup(proc.cmd)
	<-proc.done
}

// runtimeEnv is the function's environment: Config.Env without the
// variables Lambda reserves, and the ones it sets.
func (f *Function) runtimeEnv(runtimeAPI string) []string {
	out := make([]string, 0, len(f.cfg.Env)+10)
	set := map[string]bool{}
	for _, kv := range f.cfg.Env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "AWS_LAMBDA_RUNTIME_API", "AWS_LAMBDA_MAX_CONCURRENCY", "_HANDLER", "LAMBDA_TASK_ROOT", "AWS_LAMBDA_FUNCTION_NAME":
			continue
		}
		set[k] = true
		out = append(out, kv)
	}
	out = append(out, "AWS_LAMBDA_RUNTIME_API="+runtimeAPI, "LAMBDA_TASK_ROOT="+filepath.Dir(f.cfg.Bootstrap),
		"_HANDLER="+filepath.Base(f.cfg.Bootstrap), "AWS_LAMBDA_FUNCTION_NAME="+f.cfg.Name)
	if f.multi() {
		out = append(out, "AWS_LAMBDA_MAX_CONCURRENCY="+strconv.Itoa(f.cfg.Concurrency))
	}
	region := envValue(f.cfg.Env, "AWS_REGION", DefaultRegion)
	for _, kv := range [][2]string{
		{"AWS_LAMBDA_FUNCTION_VERSION", "$LATEST"},
		{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "1024"},
		{"AWS_REGION", region},
		{"AWS_DEFAULT_REGION", region},
	} {
		if !set[kv[0]] {
			out = append(out, kv[0]+"="+kv[1])
		}
	}
	return out
}

// envValue returns the last value of name in env, or def.
func envValue(env []string, name, def string) string {
	v := def
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name && val != "" {
			v = val
		}
	}
	return v
}

func (p *process) add(inv *invocation) {
	p.mu.Lock()
	p.invs[inv.id] = inv
	p.mu.Unlock()
}

func (p *process) remove(inv *invocation) {
	p.mu.Lock()
	delete(p.invs, inv.id)
	p.mu.Unlock()
}

func (p *process) current(id string) *invocation {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.invs[id]
}

// ServeHTTP serves the Runtime API to the process.
func (p *process) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := p.s
	log := s.f.log
	path, ok := strings.CutPrefix(r.URL.Path, runtimePrefix)
	if !ok {
		http.NotFound(w, r)
		return
	}
	switch {
	case r.Method == http.MethodGet && path == "invocation/next":
		p.readyOnce.Do(func() { close(p.ready) })
		var inv *invocation
		select {
		case inv = <-p.next:
		default:
			// Nothing to run: Lambda freezes the sandbox until an
			// invocation comes.
			frozen := s.f.cfg.Freeze && p.freeze()
			select {
			case inv = <-p.next:
			case <-r.Context().Done(): // the process exited
			}
			if frozen {
				p.thaw()
			}
		}
		if inv != nil {
			p.served.Add(1)
			h := w.Header()
			h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
			h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(inv.deadline.UnixMilli(), 10))
			h.Set("Lambda-Runtime-Invoked-Function-Arn", s.f.arn)
			h.Set("Lambda-Runtime-Trace-Id", "Root=1-"+strconv.FormatInt(time.Now().Unix(), 16)+"-"+strings.ReplaceAll(inv.id, "-", "")[:24]+";Sampled=0")
			h.Set("Content-Type", "application/json")
			w.Write(inv.event)
		}

	case r.Method == http.MethodPost && strings.HasPrefix(path, "invocation/"):
		id, what, _ := strings.Cut(strings.TrimPrefix(path, "invocation/"), "/")
		inv := p.current(id)
		if inv == nil || (what != "response" && what != "error") {
			runtimeError(w, http.StatusBadRequest, "InvalidRequestID", "no invocation "+id+" in progress")
			return
		}
		done := make(chan struct{})
		live := &liveResponse{
			contentType: r.Header.Get("Content-Type"),
			body:        r.Body,
			trailer:     func() http.Header { return r.Trailer },
			release:     sync.OnceFunc(func() { close(done) }),
		}
		if what == "error" {
			// The payload ({"errorMessage","errorType"}) is what an
			// invocation with a function error returns.
			b, _ := io.ReadAll(io.LimitReader(r.Body, maxErrorPayload))
			log.Debug("function error", "sandbox", s.id, "request_id", id, "type", r.Header.Get(errorTypeTrailer))
			live.contentType, live.body, live.fnError = "application/json", strings.NewReader(string(b)), true
		}
		select {
		case inv.result <- live:
		default:
			runtimeError(w, http.StatusBadRequest, "InvalidStateTransition", "the invocation already has a response")
			return
		}
		select {
		case <-done: // the response has been read
		case <-r.Context().Done():
		case <-p.done:
		}
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"status":"OK"}`)

	case r.Method == http.MethodPost && path == "init/error":
		b, _ := io.ReadAll(io.LimitReader(r.Body, maxErrorPayload))
		p.mu.Lock()
		p.initErr = string(b)
		p.mu.Unlock()
		log.Error("function init error", "sandbox", s.id, "payload", truncate(b, 512))
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"status":"OK"}`)

	default:
		runtimeError(w, http.StatusNotFound, "NotFound", "unknown Runtime API call "+r.Method+" "+r.URL.Path)
	}
}

func runtimeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"errorType":%q,"errorMessage":%q}`, typ, msg)
}

// Close stops every process and waits for them; invocations in progress
// fail. Invoke and Warm return ErrClosed afterwards.
func (f *Function) Close() error {
	f.mu.Lock()
	f.closed = true
	close(f.freed) // wakes the invocations waiting for a slot
	f.freed = make(chan struct{})
	var procs []*process
	for _, s := range f.sandboxes {
		if s.proc != nil {
			procs = append(procs, s.proc)
		}
	}
	f.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(func() { p.s.kill(p) })
	}
	wg.Wait()
	return nil
}

// newUUID returns a random version 4 UUID, as Lambda's request ids are.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
