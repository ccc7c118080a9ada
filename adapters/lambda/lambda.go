package lambda

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	awslambda "github.com/aws/aws-lambda-go/lambda"

	"github.com/mcpfn/mcpfn/core"
)

// Options configures [Wrap] and [Start]. A nil *Options means the zero
// value. The struct is copied when the function is built, so later changes
// have no effect.
type Options struct {
	// Streaming selects response streaming for the integrations that
	// support it: Function URLs with invoke mode RESPONSE_STREAM, and REST
	// APIs whose Lambda proxy integration uses the
	// response-streaming-invocations URI with transfer mode STREAM. The
	// function's integrations must be configured to match: a buffered
	// integration cannot read a streamed response, nor the reverse.
	//
	// HTTP API and load balancer events are answered buffered either way;
	// with Streaming set, the first such event of each integration logs a
	// warning saying so. A Function URL or REST API event does not say
	// whether its integration streams, so the other mismatches cannot be
	// seen from the function: see the package documentation.
	//
	// The zero value, false, buffers every response.
	Streaming bool

	// Logger receives the panics recovered from the handler (level Error)
	// and the events that could not be turned into a request (level Warn).
	// Records are logged with the invocation context, so a handler such as
	// lambdacontext.NewLogHandler can add the request ID.
	//
	// The zero value, nil, means the server's logger (core.Server.Logger)
	// when the handler is a *core.Server, and slog.Default() otherwise; use
	// slog.New(slog.DiscardHandler) for silence.
	Logger *slog.Logger

	// Flush is flushed at the end of every invocation: the tracer and
	// meter providers of the OpenTelemetry SDK, whose batches would
	// otherwise wait in a sandbox that Lambda freezes between invocations
	// (and may never thaw). The flush runs once the response has been sent
	// (a streamed one to its end), before the function asks the Runtime
	// API for the next invocation, which is when Lambda freezes the
	// sandbox: the client does not wait for it, the invocation's duration
	// includes it. The Flushers are flushed concurrently, each within
	// FlushTimeout and the invocation's deadline; a failure is logged at
	// level Warn, at most once a minute. Nil entries are skipped.
	//
	// The zero value, nil, flushes nothing.
	Flush []Flusher

	// FlushTimeout bounds each flush of Flush. The zero value means
	// DefaultFlushTimeout (2 seconds).
	FlushTimeout time.Duration
}

// Wrap converts h into a Lambda handler function for API Gateway (REST and
// HTTP APIs), Function URL and Application Load Balancer events; the package
// documentation describes the mapping. It also answers the task events of
// asynchronous invocations ([TaskEvent]), running the task when h has a
// RunTask method, as a [*core.Server] does, and answering a [TaskAnswer]
// (see "Tasks" in the package documentation). Wrap panics if h is nil.
//
// When h is a [*core.Server] that seals requestState with a key of its own
// (no ServerOptions.Keys: [core.Server.PerProcessKeys]), Wrap logs one
// warning naming the fix, since Lambda runs many instances of a function and
// a multi round-trip request whose retry reaches another instance fails.
// When h is a [*core.Server] with task tools ([core.Server.ServesTasks])
// whose tasks would run on the in-process runner
// ([core.Server.InProcessTaskRunner]) or live in the instance's memory
// ([core.Server.PerProcessTasks]), Wrap logs one error naming the fix:
// Lambda freezes a sandbox once its response is sent, and the next request
// for a task may reach another instance (see "Tasks" in the package
// documentation). Both are checked when Wrap is called: add the tools
// first.
//
// The returned function takes the raw event and returns the integration's
// response: [events.APIGatewayProxyResponse], [events.APIGatewayV2HTTPResponse],
// [events.LambdaFunctionURLResponse] or [events.ALBTargetGroupResponse] when
// buffered, and [*events.LambdaFunctionURLStreamingResponse] or
// [*events.APIGatewayProxyStreamingResponse] when streaming. A streaming
// response must be read to the end or closed; Close waits for the handler to
// return. The error is always nil: malformed events and panics become HTTP
// responses (see the package documentation).
//
// With [Options.Flush] set, every answer is returned as an io.ReadCloser
// of what it would be otherwise (the JSON of a buffered response or of a
// [TaskAnswer], the prelude and body of a streamed one) whose Close flushes
// after closing it: aws-lambda-go sends such an answer as it reads it and
// closes it once sent. An error is returned after the flush.
//
// The returned function is safe for concurrent use if h is. It is meant for
// awslambda.StartHandlerFunc, which is what [Start] does; call that directly
// to pass aws-lambda-go options such as WithEnableSIGTERM.
func Wrap(h http.Handler, opts *Options) func(context.Context, json.RawMessage) (any, error) {
	if h == nil {
		panic("lambda: Wrap called with a nil handler")
	}
	a := &adapter{handler: h}
	if opts != nil {
		a.opts = *opts
	}
	srv, _ := h.(*core.Server)
	a.tasks, _ = h.(taskExecutor)
	if a.opts.Logger == nil {
		a.opts.Logger = slog.Default()
		if srv != nil {
			a.opts.Logger = srv.Logger()
		}
	}
	if srv != nil && srv.PerProcessKeys() {
		a.opts.Logger.Warn(perProcessKeysWarning)
	}
	if srv != nil && srv.ServesTasks() {
		switch {
		case srv.InProcessTaskRunner():
			a.opts.Logger.Error(inProcessTasksError)
		case srv.PerProcessTasks():
			a.opts.Logger.Error(perProcessTasksError)
		}
	}
	if f := newFlusher(&a.opts); f != nil {
		return f.wrap(a.invoke)
	}
	return a.invoke
}

// perProcessKeysWarning is the warning Wrap logs for a server without
// shared keys.
const perProcessKeysWarning = "lambda: no shared signing keys: this instance seals requestState with a random key of its own, " +
	"and Lambda runs many instances, so a multi round-trip request whose retry reaches another instance (or this one after a restart) " +
	"fails with \"Invalid or expired requestState\"; share the keys: set MCPFN_KEYS_SECRET_ID to a Secrets Manager secret " +
	"(deploy/lambdaenv; the mcp-lambda Terraform module sets it), or ServerOptions.Keys to core.StaticKeys from a secret " +
	"or a core.KeyProvider such as store/secretsmanager"

// inProcessTasksError is the error Wrap logs for a server with task tools
// and the in-process runner. An error, not a warning: unlike per-process
// keys, which fail only a retry that changes instance, it fails every task
// that outlives the response that created it, on one instance as on many.
const inProcessTasksError = "lambda: task tools, but no task runner for Lambda: each task would run in the invocation that created it, " +
	"which Lambda freezes once the response is sent, so the task stops mid-run and is failed once its lease passes; " +
	"run each task in an asynchronous invocation of the function, with the tasks in a store every instance shares: " +
	"MCPFN_DYNAMODB_TABLE with MCPFN_TASK_RUNNER=lambda (deploy/lambdaenv; the mcp-lambda Terraform module's tasks = true), " +
	"or ServerOptions.TaskRunner from adapters/lambda/taskrunner with ServerOptions.TaskStore from store/dynamo"

// perProcessTasksError is the error Wrap logs for a server with task tools
// whose tasks live in the instance's memory, with a runner of its own.
const perProcessTasksError = "lambda: task tools, but the tasks live in this instance's memory (no ServerOptions.TaskStore), " +
	"and Lambda runs many instances: a poll, update or cancel, or the invocation that runs the task, that reaches another instance " +
	"finds no task (-32602); keep the tasks in a store every instance shares: MCPFN_DYNAMODB_TABLE (deploy/lambdaenv; " +
	"the mcp-lambda Terraform module sets it), or ServerOptions.TaskStore from store/dynamo"

// Start runs h as a Lambda function until the process ends, like
// lambdaurl.Start: it is awslambda.StartHandlerFunc(Wrap(h, opts)). Start
// never returns; it ends the process if the Lambda runtime API is unreachable
// (outside Lambda, or without an emulator).
//
// Responses stream only through the Lambda runtime API, which is what the
// provided.al2023 runtime uses; see the package documentation for the build.
func Start(h http.Handler, opts *Options) {
	awslambda.StartHandlerFunc(Wrap(h, opts))
}

type eventContextKey struct{}

func (eventContextKey) String() string { return "lambda.eventContextKey" }

// NewContext returns a copy of ctx that carries event, for
// [RequestFromContext]. [Wrap] does this for every request; NewContext is
// for testing handlers without it.
func NewContext(ctx context.Context, event any) context.Context {
	return context.WithValue(ctx, eventContextKey{}, &eventValue{v: event})
}

// RequestFromContext returns the event the request was built from, as one
// of [*events.APIGatewayProxyRequest] (REST API, or HTTP API with payload
// format 1.0), [*events.APIGatewayV2HTTPRequest] (HTTP API),
// [*events.LambdaFunctionURLRequest] or [*events.ALBTargetGroupRequest].
// It reports false if ctx carries no event.
//
// Pass the request's context (r.Context()). The event is decoded on the first
// call, so handlers that never ask for it do not pay for it; the result is
// shared, and must not be modified. RequestFromContext is safe for concurrent
// use.
func RequestFromContext(ctx context.Context) (any, bool) {
	e, ok := ctx.Value(eventContextKey{}).(*eventValue)
	if !ok {
		return nil, false
	}
	v := e.get()
	return v, v != nil
}

// adapter is the state shared by all invocations of one wrapped handler.
type adapter struct {
	handler http.Handler
	opts    Options
	tasks   taskExecutor // the handler, when it runs tasks
	// unstreamable warns once per integration that cannot stream (HTTP
	// APIs, load balancers) when Streaming is set.
	unstreamable [kindALB + 1]sync.Once
}

// warnUnstreamable logs, once per integration, that an event of an
// integration that cannot stream arrived while Streaming is set: the answer
// is buffered, which is correct, but no response of that integration
// streams, which the configuration says it expects.
func (a *adapter) warnUnstreamable(ctx context.Context, k kind) {
	a.unstreamable[k].Do(func() {
		name := "an HTTP API"
		if k == kindALB {
			name = "a load balancer"
		}
		a.opts.Logger.WarnContext(ctx, "lambda: Options.Streaming is set, but this event comes from "+name+
			", which cannot stream: its responses are buffered (server-sent events arrive when the handler returns); "+
			"put the function behind a Function URL with invoke mode RESPONSE_STREAM or a REST API streaming integration, "+
			"or unset Streaming (MCPFN_STREAMING) for buffered integrations")
	})
}

func (a *adapter) invoke(ctx context.Context, payload json.RawMessage) (any, error) {
	// Only the first invocation writes invoked.
	cold := !invoked.Load() && !invoked.Swap(true)
	ctx = context.WithValue(ctx, coldStartKey{}, cold)
	var ev event
	if err := json.Unmarshal(payload, &ev); err != nil {
		a.opts.Logger.WarnContext(ctx, "lambda: event is not a JSON object", "err", err)
		return a.badRequest(kindUnknown, &ev, "lambda: event is not an HTTP event"), nil
	}
	if ev.Task != nil {
		return a.task(ctx, payload)
	}
	k := ev.kind()
	if k == kindUnknown {
		a.opts.Logger.WarnContext(ctx, "lambda: unrecognised event")
		return a.badRequest(k, &ev, "lambda: event is not an HTTP event"), nil
	}
	ctx = context.WithValue(ctx, eventContextKey{}, &eventValue{kind: k, raw: payload})
	if a.opts.Streaming {
		if k == kindFunctionURL || k == kindAPIGatewayV1 {
			return a.stream(ctx, k, &ev), nil
		}
		a.warnUnstreamable(ctx, k)
	}
	// The response is delivered when the handler returns: tell the MCP
	// server not to rely on a live stream.
	ctx = core.NewContextBuffered(ctx)
	req, msg := ev.request(ctx, k)
	if msg != "" {
		a.opts.Logger.WarnContext(ctx, "lambda: malformed event", "err", msg)
		return a.badRequest(k, &ev, msg), nil
	}
	return a.buffer(ctx, k, &ev, req), nil
}

// buffer runs the handler to completion and returns the buffered response.
func (a *adapter) buffer(ctx context.Context, k kind, ev *event, req *http.Request) any {
	w := &bufferedWriter{}
	w.head = req.Method == http.MethodHead
	if a.serve(ctx, w, req) {
		return bufferedResponse(k, ev, internalServerError())
	}
	return bufferedResponse(k, ev, w.result())
}

// serve runs the handler, recovering and logging a panic.
func (a *adapter) serve(ctx context.Context, w http.ResponseWriter, req *http.Request) (panicked bool) {
	defer func() {
		if v := recover(); v != nil {
			panicked = true
			a.logPanic(ctx, v)
		}
	}()
	a.handler.ServeHTTP(w, req)
	return false
}

func (a *adapter) logPanic(ctx context.Context, v any) {
	if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
		return
	}
	a.opts.Logger.ErrorContext(ctx, "lambda: handler panicked", "panic", v, "stack", string(debug.Stack()))
}

// stream starts the handler in a goroutine and returns once the status and
// headers are known; the body follows through a pipe.
func (a *adapter) stream(ctx context.Context, k kind, ev *event) any {
	// As in net/http, the request's context ends when the handler returns.
	ctx, cancel := context.WithCancel(ctx)
	req, msg := ev.request(ctx, k)
	if msg != "" {
		cancel()
		a.opts.Logger.WarnContext(ctx, "lambda: malformed event", "err", msg)
		return a.badRequest(k, ev, msg)
	}
	pr, pw := io.Pipe()
	w := newStreamWriter(pw, req.Method == http.MethodHead)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		returned := false
		defer func() {
			v := recover()
			switch {
			case v != nil:
				a.logPanic(ctx, v)
				w.finish(true)
			case !returned: // runtime.Goexit
				w.finish(true)
			default:
				w.finish(false)
			}
		}()
		a.handler.ServeHTTP(w, req)
		returned = true
	}()
	<-w.ready
	body := &streamBody{pr: pr, cancel: cancel, done: done}
	return streamingResponse(k, w.result(), body)
}

// streamBody is the body of a streaming response: the read side of the pipe
// the handler writes to. Close ends the handler's context and waits for the
// handler to return, so that it never outlives the invocation.
type streamBody struct {
	pr     *io.PipeReader
	cancel context.CancelFunc
	done   <-chan struct{}
}

func (b *streamBody) Read(p []byte) (int, error) { return b.pr.Read(p) }

func (b *streamBody) Close() error {
	b.pr.Close()
	b.cancel()
	<-b.done
	return nil
}

func (a *adapter) badRequest(k kind, ev *event, msg string) any {
	res := plainResponse(http.StatusBadRequest, msg)
	if a.opts.Streaming && (k == kindFunctionURL || k == kindAPIGatewayV1 || k == kindUnknown) {
		if k == kindUnknown {
			k = kindFunctionURL // the streaming preludes only differ in optional fields
		}
		return streamingResponse(k, res, nil)
	}
	return bufferedResponse(k, ev, res)
}
