package lambda

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Flusher is what a telemetry pipeline that batches has: the
// OpenTelemetry SDK's *trace.TracerProvider and *metric.MeterProvider
// (go.opentelemetry.io/otel/sdk/trace and .../sdk/metric) are Flushers,
// and so is anything else with the method. ForceFlush exports what is
// buffered and returns when it is done or ctx ends. It must be safe for
// concurrent use.
type Flusher interface {
	ForceFlush(ctx context.Context) error
}

// DefaultFlushTimeout is the longest [Options.FlushTimeout] lets a flush
// take when it is zero.
const DefaultFlushTimeout = 2 * time.Second

// invoked records that this process has served an invocation, for
// [ColdStart]: a process is one sandbox, and its first invocation is the
// one that paid for its start.
var invoked atomic.Bool

type coldStartKey struct{}

func (coldStartKey) String() string { return "lambda.coldStartKey" }

// ColdStart reports whether ctx belongs to the first invocation this
// process serves (cold is true), the one whose sandbox was started for it,
// or to a later one (false). ok is false when ctx is not an invocation's
// context of a function built by [Wrap] (or [Start]). Concurrent first
// invocations of one sandbox (Lambda managed instances) count one cold
// start: the one that arrived first. The request's context (r.Context())
// and every context derived from it carry it. A sandbox of provisioned
// concurrency is started before its first invocation comes, which the
// adapter cannot see (it reads no environment variable): deploy/lambdaenv's
// logs read AWS_LAMBDA_INITIALIZATION_TYPE for that.
func ColdStart(ctx context.Context) (cold, ok bool) {
	cold, ok = ctx.Value(coldStartKey{}).(bool)
	return cold, ok
}

// flusher flushes the Flushers of Options at the end of each invocation.
type flusher struct {
	list    []Flusher
	timeout time.Duration
	log     func(ctx context.Context, err error)
}

// newFlusher returns nil when opts lists no Flusher.
func newFlusher(opts *Options) *flusher {
	var list []Flusher
	for _, f := range opts.Flush {
		if f != nil {
			list = append(list, f)
		}
	}
	if len(list) == 0 {
		return nil
	}
	timeout := opts.FlushTimeout
	if timeout <= 0 {
		timeout = DefaultFlushTimeout
	}
	var last atomic.Int64 // unix nanoseconds of the last warning
	logger := opts.Logger
	return &flusher{list: list, timeout: timeout, log: func(ctx context.Context, err error) {
		// One warning a minute at most: a collector that is down would
		// otherwise add a line to every invocation.
		now := time.Now().UnixNano()
		if prev := last.Load(); prev != 0 && now-prev < int64(time.Minute) || !last.CompareAndSwap(prev, now) {
			return
		}
		logger.WarnContext(ctx, "lambda: flushing telemetry at the end of an invocation failed (logged at most once a minute)", "err", err)
	}}
}

// flush flushes every Flusher, concurrently, within f.timeout and never
// past the invocation's deadline; it logs a failure.
func (f *flusher) flush(ctx context.Context) {
	end := time.Now().Add(f.timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(end) {
		end = dl
	}
	fctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), end)
	defer cancel()
	errs := make([]error, len(f.list))
	if len(f.list) == 1 {
		errs[0] = f.list[0].ForceFlush(fctx)
	} else {
		var wg sync.WaitGroup
		for i, fl := range f.list {
			wg.Go(func() { errs[i] = fl.ForceFlush(fctx) })
		}
		wg.Wait()
	}
	if err := errors.Join(errs...); err != nil {
		f.log(ctx, err)
	}
}

// wrap returns fn's answer made to flush once it has been sent: aws-lambda-go
// sends an io.Reader answer as it is and then closes it, before it asks the
// Runtime API for the next invocation (which is when Lambda freezes the
// sandbox). A streamed response is already such a reader; any other answer
// becomes the reader of its JSON. An error is returned after a flush, since
// nothing is closed after it is sent.
func (f *flusher) wrap(fn func(context.Context, json.RawMessage) (any, error)) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, payload json.RawMessage) (any, error) {
		res, err := fn(ctx, payload)
		if err != nil {
			f.flush(ctx)
			return nil, err
		}
		if rc, ok := res.(io.ReadCloser); ok {
			return &flushingStream{ReadCloser: rc, ctype: contentType(res), done: func() { f.flush(ctx) }}, nil
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // as aws-lambda-go encodes answers
		if err := enc.Encode(res); err != nil {
			f.flush(ctx)
			return nil, err
		}
		buf.Truncate(buf.Len() - 1) // the encoder's newline
		return &flushingStream{ReadCloser: io.NopCloser(&buf), ctype: "application/json", done: func() { f.flush(ctx) }}, nil
	}
}

func contentType(v any) string {
	if c, ok := v.(interface{ ContentType() string }); ok {
		return c.ContentType()
	}
	return "application/octet-stream"
}

// flushingStream is an answer that aws-lambda-go sends as it reads it
// (with the Content-Type of ContentType) and closes once sent; closing it
// closes the answer, then flushes.
type flushingStream struct {
	io.ReadCloser
	ctype string
	done  func()
	once  sync.Once
}

func (s *flushingStream) ContentType() string { return s.ctype }

func (s *flushingStream) Close() error {
	err := s.ReadCloser.Close()
	s.once.Do(s.done)
	return err
}

// MarshalJSON fails, so that aws-lambda-go sends the reader as it is
// rather than its JSON, as it does for the events package's streaming
// responses.
func (s *flushingStream) MarshalJSON() ([]byte, error) {
	return nil, errors.New("lambda: a flushing answer is a stream, not JSON")
}
