package lambda

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"

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
	// HTTP API and load balancer events are answered buffered either way.
	//
	// The zero value, false, buffers every response.
	Streaming bool

	// Logger receives the panics recovered from the handler (level Error)
	// and the events that could not be turned into a request (level Warn).
	// Records are logged with the invocation context, so a handler such as
	// lambdacontext.NewLogHandler can add the request ID.
	//
	// The zero value, nil, discards them.
	Logger *slog.Logger
}

// Wrap converts h into a Lambda handler function for API Gateway (REST and
// HTTP APIs), Function URL and Application Load Balancer events; the package
// documentation describes the mapping. Wrap panics if h is nil.
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
	if a.opts.Logger == nil {
		a.opts.Logger = slog.New(slog.DiscardHandler)
	}
	return a.invoke
}

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
}

func (a *adapter) invoke(ctx context.Context, payload json.RawMessage) (any, error) {
	var ev event
	if err := json.Unmarshal(payload, &ev); err != nil {
		a.opts.Logger.WarnContext(ctx, "lambda: event is not a JSON object", "err", err)
		return a.badRequest(kindUnknown, &ev, "lambda: event is not an HTTP event"), nil
	}
	k := ev.kind()
	if k == kindUnknown {
		a.opts.Logger.WarnContext(ctx, "lambda: unrecognised event")
		return a.badRequest(k, &ev, "lambda: event is not an HTTP event"), nil
	}
	ctx = context.WithValue(ctx, eventContextKey{}, &eventValue{kind: k, raw: payload})
	if a.opts.Streaming && (k == kindFunctionURL || k == kindAPIGatewayV1) {
		return a.stream(ctx, k, &ev), nil
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
