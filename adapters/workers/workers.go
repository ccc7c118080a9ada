//go:build js && wasm

package workers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"syscall/js"
	"time"

	"github.com/mcpfn/mcpfn/core"
)

// DefaultPath is the path the server answers at when Options.Path is empty.
const DefaultPath = "/mcp"

// wellKnownPRM is the prefix of RFC 9728 protected resource metadata URLs,
// served outside the endpoint path when the server has an Authenticator.
const wellKnownPRM = "/.well-known/oauth-protected-resource"

// Options configures Serve. The zero value serves the server at DefaultPath.
type Options struct {
	// Path is the endpoint's path; empty means DefaultPath, "*" every path.
	Path string
	// Middleware wraps the server's handler, as in package nethttp.
	Middleware func(http.Handler) http.Handler
	// Logger receives what the adapter itself reports (a recovered panic, a
	// task run that failed). Nil means slog.Default().
	Logger *slog.Logger
	// TaskDeadline bounds one task run (a request of its own, started by
	// an alarm). Zero means 14 minutes, under the 15 minutes of wall time
	// Workers give a Durable Object alarm.
	TaskDeadline time.Duration
}

// glueGlobal is the JavaScript function the glue defines before it starts
// an instance; Serve hands it the instance's entry points.
const glueGlobal = "__mcpfnRegister"

// Serve registers srv as the Worker's handler and never returns. It must be
// called from main, in a program started by the glue (package glue); it
// panics otherwise.
func Serve(srv *core.Server, opts *Options) {
	if srv == nil {
		panic("workers: nil server")
	}
	if opts == nil {
		opts = &Options{}
	}
	register := js.Global().Get(glueGlobal)
	if register.Type() != js.TypeFunction {
		panic("workers: not started by the mcpfn Worker glue (" + glueGlobal + " is not defined); build with `mcpfn package workers`")
	}
	h := newHost(srv, opts)
	current = h
	api := js.Global().Get("Object").New()
	api.Set("fetch", js.FuncOf(h.fetch))
	api.Set("task", js.FuncOf(h.task))
	api.Set("cancel", js.FuncOf(h.cancel))
	api.Set("tick", js.FuncOf(func(js.Value, []js.Value) any { return nil }))
	api.Set("maxBody", float64(h.maxBody))
	register.Invoke(api)
	select {}
}

// host is one Go instance's state: the requests in flight.
type host struct {
	srv          *core.Server
	handler      http.Handler
	log          *slog.Logger
	maxBody      int64
	taskDeadline time.Duration

	mu     sync.Mutex
	live   map[int]*request // by the glue's request id
	recent *request         // the request most recently started, for I/O outside any request

	localAddr net.Addr // MCPFN_LOCAL_ADDR, when set: see localAddrVar
}

// localAddrVar names the string binding that tells the adapter the address
// workerd listens on (a local run: the configuration `mcpfn package
// workers` writes sets it). A Worker cannot see its socket, and core's DNS
// rebinding protection answers a server reached on loopback only for
// loopback Host names (http.LocalAddrContextKey); on Cloudflare's edge the
// binding is unset and every Host reaches the Worker's routes.
const localAddrVar = "MCPFN_LOCAL_ADDR"

func newHost(srv *core.Server, opts *Options) *host {
	h := &host{srv: srv, log: opts.Logger, live: map[int]*request{}, taskDeadline: opts.TaskDeadline}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.taskDeadline <= 0 {
		h.taskDeadline = 14 * time.Minute
	}
	h.maxBody = srv.MaxRequestBytes()
	if a := os.Getenv(localAddrVar); a != "" {
		if ap, err := netip.ParseAddrPort(a); err == nil {
			h.localAddr = net.TCPAddrFromAddrPort(ap)
		} else {
			h.log.Error("workers: ignoring "+localAddrVar+": not ip:port", "value", a)
		}
	}
	path := opts.Path
	if path == "" {
		path = DefaultPath
	}
	var inner http.Handler = srv
	if opts.Middleware != nil {
		inner = opts.Middleware(inner)
	}
	if path == "*" {
		h.handler = inner
	} else {
		authn := srv.Authenticator() != nil
		h.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != path && !(authn && strings.HasPrefix(r.URL.Path, wellKnownPRM)) {
				http.NotFound(w, r)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
	return h
}

// request is one glue request (an HTTP request or a task run) as Go sees
// it: rq is the glue's object, whose post method queues an action for the
// request to carry out in its own context.
type request struct {
	id     int
	rq     js.Value
	cancel context.CancelFunc
}

type requestKey struct{}

func (h *host) add(rq js.Value, cancel context.CancelFunc) *request {
	r := &request{id: rq.Get("id").Int(), rq: rq, cancel: cancel}
	h.mu.Lock()
	h.live[r.id] = r
	h.recent = r
	h.mu.Unlock()
	return r
}

func (h *host) remove(r *request) {
	h.mu.Lock()
	delete(h.live, r.id)
	if h.recent == r {
		h.recent = nil
		for _, o := range h.live {
			h.recent = o
			break
		}
	}
	h.mu.Unlock()
}

// fetch is the glue's entry for an HTTP request: rq carries method, url,
// headers (an array of [name, value]) and body (a Uint8Array, at most
// maxBody+1 bytes). It starts the handler and returns at once; the handler
// runs as far as it can before Go hands control back to JavaScript.
func (h *host) fetch(_ js.Value, args []js.Value) any {
	rq := args[0]
	ctx, cancel := context.WithCancel(context.Background())
	r := h.add(rq, cancel)
	ctx = context.WithValue(ctx, requestKey{}, r)
	if h.localAddr != nil {
		ctx = context.WithValue(ctx, http.LocalAddrContextKey, h.localAddr)
	}
	req, err := newHTTPRequest(ctx, rq)
	if err != nil {
		cancel()
		h.remove(r)
		post(rq, "full", http.StatusBadRequest, jsHeaders(http.Header{"Content-Type": {"text/plain; charset=utf-8"}}), jsBytes([]byte(err.Error()+"\n")))
		return nil
	}
	go h.serve(r, req)
	return nil
}

func (h *host) serve(r *request, req *http.Request) {
	w := &responseWriter{rq: r.rq, header: http.Header{}}
	defer func() {
		if p := recover(); p != nil {
			h.log.ErrorContext(req.Context(), "workers: panic serving request", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			w.abort()
		}
		w.finish()
		r.cancel()
		h.remove(r)
	}()
	h.handler.ServeHTTP(w, req)
}

// cancel is the glue's entry when a streamed response is cancelled (the
// client went away): it cancels the handler's context.
func (h *host) cancel(_ js.Value, args []js.Value) any {
	h.mu.Lock()
	r := h.live[args[0].Int()]
	h.mu.Unlock()
	if r != nil {
		r.cancel()
	}
	return nil
}

// task is the glue's entry for a task run, a request of its own started by
// the task's Durable Object alarm: rq carries taskId. It posts "result"
// when the run is over, or "error" (the alarm then retries) when the run
// could not store its outcome.
func (h *host) task(_ js.Value, args []js.Value) any {
	rq := args[0]
	id := rq.Get("taskId").String()
	ctx, cancel := context.WithTimeout(context.Background(), h.taskDeadline)
	r := h.add(rq, cancel)
	ctx = context.WithValue(ctx, requestKey{}, r)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				h.log.ErrorContext(ctx, "workers: panic running task", "task", id, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				post(rq, "error", "panic running task")
			}
			cancel()
			h.remove(r)
		}()
		err := h.srv.RunTask(ctx, id)
		switch {
		case err == nil, errors.Is(err, core.ErrTaskNotFound):
			post(rq, "result", "ok")
		default:
			h.log.ErrorContext(ctx, "workers: task run failed", "task", id, "err", err)
			post(rq, "error", err.Error())
		}
	}()
	return nil
}

// post queues an action on a glue request; the request carries it out in
// its own context when it next drains its queue.
func post(rq js.Value, kind string, args ...any) {
	rq.Call("post", append([]any{kind}, args...)...)
}
