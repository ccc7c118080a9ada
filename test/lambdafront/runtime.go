package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The streaming backend (-runtime stream) does what Lambda does for a
// provided.al2023 function, without the emulator: it serves the Lambda
// Runtime API (https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html)
// on loopback, one endpoint per process, runs one bootstrap process per
// sandbox, and hands each response over as it arrives, so that a streamed
// response reaches the client chunk by chunk. Each process has an endpoint
// of its own, closed when it exits, so that a request the dead process left
// behind can never take the next process's invocation.
//
// Like Lambda, a sandbox starts its process on its first invocation, runs one
// invocation at a time, and replaces the process when it exits, times out,
// or is abandoned by its client.

// Runtime API paths and headers.
const (
	runtimePrefix        = "/2018-06-01/runtime/"
	streamingContentType = "application/vnd.awslambda.http-integration-response"
	errorTypeTrailer     = "Lambda-Runtime-Function-Error-Type"
	errorBodyTrailer     = "Lambda-Runtime-Function-Error-Body"
	functionARN          = "arn:aws:lambda:us-east-1:123456789012:function:lambdafront"
)

// Runtime is the backend that runs the function.
type Runtime string

const (
	RuntimeRIE    Runtime = "rie"    // a pool of aws-lambda-rie emulators (buffers streamed responses)
	RuntimeStream Runtime = "stream" // lambdafront's own Runtime API (passes streamed responses through)
)

func parseRuntime(s string) (Runtime, error) {
	switch r := Runtime(s); r {
	case RuntimeRIE, RuntimeStream:
		return r, nil
	}
	return "", fmt.Errorf("unknown runtime %q (want rie or stream)", s)
}

// liveResponse is a function's response as it arrives.
type liveResponse struct {
	// contentType is the Content-Type of the runtime's response POST:
	// streamingContentType for a streamed HTTP response.
	contentType string
	// body is the response payload, as the function sends it.
	body io.Reader
	// trailer returns the error trailers of a streamed response; valid once
	// body has returned io.EOF.
	trailer func() http.Header
	// release ends the invocation on the front door's side; call it once,
	// when done with body.
	release func()
}

// streamInvoker is an invoker that hands over the response as it arrives.
type streamInvoker interface {
	invoker
	invokeStream(ctx context.Context, event []byte) (*liveResponse, error)
}

// errRuntimeExited is returned when the function's process exits during an
// invocation (Lambda's Runtime.ExitError).
var errRuntimeExited = errors.New("the function's process exited during the invocation")

// runtimePool is a pool of sandboxes; it implements streamInvoker.
type runtimePool struct {
	cfg  poolConfig
	free chan *sandbox
	all  []*sandbox

	mu     sync.Mutex
	closed bool
}

// sandbox runs one invocation at a time, each in its bootstrap process,
// which it starts when needed.
type sandbox struct {
	id   int
	pool *runtimePool
	out  *prefixWriter

	mu   sync.Mutex
	proc *process    // nil when no process runs
	cur  *invocation // the invocation in progress, or nil
}

// process is one run of the bootstrap, with its Runtime API endpoint.
type process struct {
	s      *sandbox
	cmd    *exec.Cmd
	srv    *http.Server
	next   chan *invocation // GET .../invocation/next receives from it
	done   chan struct{}    // closed when it has exited
	served atomic.Int64     // invocations handed to it
}

// invocation is one invocation in progress.
type invocation struct {
	id       string
	event    []byte
	deadline time.Time
	result   chan *liveResponse // what the function POSTed (one value)
	proc     *process
}

func newRuntimePool(cfg poolConfig) (*runtimePool, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &runtimePool{cfg: cfg, free: make(chan *sandbox, cfg.Size)}
	for i := range cfg.Size {
		s := &sandbox{id: i, pool: p, out: &prefixWriter{w: cfg.Log, prefix: fmt.Sprintf("[fn %d] ", i)}}
		p.all = append(p.all, s)
		p.free <- s
	}
	return p, nil
}

// invoke implements invoker: the whole payload.
func (p *runtimePool) invoke(ctx context.Context, event []byte) ([]byte, error) {
	res, err := p.invokeStream(ctx, event)
	if err != nil {
		return nil, err
	}
	defer res.release()
	return io.ReadAll(io.LimitReader(res.body, 4*maxPayload))
}

// invokeStream runs one invocation on a free sandbox, and returns once the
// function has started its response (or reported an error). The response
// must be released. The invocation ends at the function timeout, or when
// ctx ends: then the process is killed, as Lambda ends a sandbox whose
// invocation timed out, and body reads fail.
func (p *runtimePool) invokeStream(ctx context.Context, event []byte) (*liveResponse, error) {
	var s *sandbox
	select {
	case s = <-p.free:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a free sandbox: %w", ctx.Err())
	}
	proc, err := s.ensureProcess()
	if err != nil {
		p.free <- s
		return nil, err
	}
	inv := &invocation{
		id: newRequestID(), event: event, deadline: time.Now().Add(p.cfg.Timeout),
		result: make(chan *liveResponse, 1), proc: proc,
	}
	s.mu.Lock()
	s.cur = inv
	s.mu.Unlock()
	timer := time.NewTimer(time.Until(inv.deadline))

	// fail ends the invocation without a response.
	fail := func(err error, kill bool) (*liveResponse, error) {
		timer.Stop()
		if kill {
			s.kill(proc)
		}
		s.endInvocation(inv)
		return nil, err
	}
	select {
	case proc.next <- inv:
	case <-proc.done:
		return fail(fmt.Errorf("%w (before it asked for the event)", errRuntimeExited), false)
	case <-timer.C:
		return fail(fmt.Errorf("%w: the function did not ask for the event within %v", errTimeout, p.cfg.Timeout), true)
	case <-ctx.Done():
		return fail(ctx.Err(), false)
	}
	var res *liveResponse
	select {
	case res = <-inv.result:
	case <-proc.done:
		return fail(errRuntimeExited, false)
	case <-timer.C:
		return fail(fmt.Errorf("%w after %v", errTimeout, p.cfg.Timeout), true)
	case <-ctx.Done():
		return fail(ctx.Err(), true)
	}

	// The body arrives while the front door reads it: watch the deadline
	// and the client meanwhile.
	released := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		defer timer.Stop()
		select {
		case <-released:
		case <-timer.C:
			p.cfg.Logger.Warn("function timed out while streaming; killing it", "sandbox", s.id, "request_id", inv.id)
			s.kill(proc)
		case <-ctx.Done():
			p.cfg.Logger.Debug("client gone while streaming; killing the function", "sandbox", s.id, "request_id", inv.id)
			s.kill(proc)
		}
	}()
	var once sync.Once
	release := res.release
	res.release = func() {
		once.Do(func() {
			close(released)
			<-watched
			release()
			s.endInvocation(inv)
		})
	}
	return res, nil
}

// endInvocation forgets inv and returns the sandbox to the pool.
func (s *sandbox) endInvocation(inv *invocation) {
	s.mu.Lock()
	if s.cur == inv {
		s.cur = nil
	}
	s.mu.Unlock()
	s.pool.free <- s
}

// ensureProcess starts the bootstrap if it is not running.
func (s *sandbox) ensureProcess() (*process, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return s.proc, nil
	}
	s.pool.mu.Lock()
	closed := s.pool.closed
	s.pool.mu.Unlock()
	if closed {
		return nil, errors.New("pool closed")
	}
	cfg := s.pool.cfg
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	cmd := exec.Command(cfg.Bootstrap)
	cmd.Dir = filepath.Dir(cfg.Bootstrap)
	cmd.Env = runtimeEnv(cfg.Env, addr, filepath.Dir(cfg.Bootstrap))
	cmd.Stdout, cmd.Stderr = s.out, s.out
	setProcAttr(cmd)
	proc := &process{s: s, cmd: cmd, next: make(chan *invocation), done: make(chan struct{})}
	proc.srv = &http.Server{Handler: proc, ErrorLog: slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug)}
	if err := cmd.Start(); err != nil {
		ln.Close()
		return nil, fmt.Errorf("starting the bootstrap: %w", err)
	}
	go proc.srv.Serve(ln)
	s.proc = proc
	cfg.Logger.Debug("bootstrap started", "sandbox", s.id, "pid", cmd.Process.Pid, "runtime_api", addr)
	go func() {
		err := cmd.Wait()
		proc.srv.Close()
		s.out.Flush()
		s.mu.Lock()
		if s.proc == proc {
			s.proc = nil
		}
		s.mu.Unlock()
		close(proc.done)
		cfg.Logger.Debug("bootstrap exited", "sandbox", s.id, "err", err)
	}()
	return proc, nil
}

// kill kills proc and waits for it.
func (s *sandbox) kill(proc *process) {
	proc.cmd.Process.Kill()
	<-proc.done
}

// runtimeEnv is the function's environment: env, without the variables
// that Lambda sets, and the ones it sets.
func runtimeEnv(env []string, runtimeAPI, taskRoot string) []string {
	out := make([]string, 0, len(env)+8)
	set := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "AWS_LAMBDA_RUNTIME_API", "AWS_LAMBDA_MAX_CONCURRENCY", "_HANDLER", "LAMBDA_TASK_ROOT":
			continue
		}
		set[k] = true
		out = append(out, kv)
	}
	out = append(out, "AWS_LAMBDA_RUNTIME_API="+runtimeAPI, "LAMBDA_TASK_ROOT="+taskRoot, "_HANDLER=bootstrap")
	for k, v := range map[string]string{
		"AWS_LAMBDA_FUNCTION_NAME":        "lambdafront",
		"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024",
		"AWS_REGION":                      "us-east-1",
	} {
		if !set[k] {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// ServeHTTP serves the Runtime API to the process.
func (p *process) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := p.s
	log := s.pool.cfg.Logger
	path, ok := strings.CutPrefix(r.URL.Path, runtimePrefix)
	if !ok {
		http.NotFound(w, r)
		return
	}
	switch {
	case r.Method == http.MethodGet && path == "invocation/next":
		var inv *invocation
		select {
		case inv = <-p.next:
		default:
			// Nothing to run: Lambda freezes the sandbox until an
			// invocation comes.
			frozen := s.pool.cfg.Freeze && p.freeze()
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
			h.Set("Lambda-Runtime-Invoked-Function-Arn", functionARN)
			h.Set("Lambda-Runtime-Trace-Id", "Root=1-"+strconv.FormatInt(time.Now().Unix(), 16)+"-"+strings.ReplaceAll(inv.id, "-", "")[:24]+";Sampled=0")
			h.Set("Content-Type", "application/json")
			w.Write(inv.event)
		}

	case r.Method == http.MethodPost && strings.HasPrefix(path, "invocation/"):
		id, what, _ := strings.Cut(strings.TrimPrefix(path, "invocation/"), "/")
		inv := s.current(id)
		if inv == nil || inv.proc != p || (what != "response" && what != "error") {
			runtimeError(w, http.StatusBadRequest, "InvalidRequestID", "no invocation "+id+" in progress")
			return
		}
		done := make(chan struct{})
		res := &liveResponse{
			contentType: r.Header.Get("Content-Type"),
			body:        r.Body,
			trailer:     func() http.Header { return r.Trailer },
			release:     sync.OnceFunc(func() { close(done) }),
		}
		if what == "error" {
			// The payload ({"errorMessage","errorType"}) is what an
			// invocation with a function error returns.
			b, _ := io.ReadAll(io.LimitReader(r.Body, maxPayload))
			log.Debug("function error", "sandbox", s.id, "request_id", id, "type", r.Header.Get("Lambda-Runtime-Function-Error-Type"))
			res.contentType, res.body = "application/json", strings.NewReader(string(b))
		}
		select {
		case inv.result <- res:
		default:
			runtimeError(w, http.StatusBadRequest, "InvalidStateTransition", "the invocation already has a response")
			return
		}
		select {
		case <-done: // the front door has read what it wanted
		case <-r.Context().Done():
		case <-p.done:
		}
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"status":"OK"}`)

	case r.Method == http.MethodPost && path == "init/error":
		b, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		log.Error("function init error", "sandbox", s.id, "payload", truncate(b, 512))
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"status":"OK"}`)

	default:
		runtimeError(w, http.StatusNotFound, "NotFound", "unknown Runtime API call "+r.Method+" "+r.URL.Path)
	}
}

// freeze stops the process, and reports whether it did.
func (p *process) freeze() bool {
	cfg := p.s.pool.cfg
	pid := p.cmd.Process.Pid
	if err := stopPID(pid); err != nil {
		cfg.Logger.Warn("could not freeze the sandbox", "sandbox", p.s.id, "pid", pid, "err", err)
		return false
	}
	cfg.Logger.Debug("sandbox frozen", "sandbox", p.s.id, "pid", pid)
	if cfg.OnFreeze != nil {
		cfg.OnFreeze(p.s.id, pid, int(p.served.Load()))
	}
	return true
}

// thaw continues the process freeze stopped.
func (p *process) thaw() {
	continuePID(p.cmd.Process.Pid)
	p.s.pool.cfg.Logger.Debug("sandbox thawed", "sandbox", p.s.id)
}

// current returns the invocation in progress if its id is id.
func (s *sandbox) current(id string) *invocation {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil && s.cur.id == id {
		return s.cur
	}
	return nil
}

func runtimeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"errorType":%q,"errorMessage":%q}`, typ, msg)
}

// close kills every process, which stops their Runtime API servers.
func (p *runtimePool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range p.all {
		wg.Go(func() {
			s.mu.Lock()
			proc := s.proc
			s.mu.Unlock()
			if proc != nil {
				s.kill(proc)
			}
		})
	}
	wg.Wait()
}

// newRequestID returns a random UUID, as Lambda's request ids are.
func newRequestID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
