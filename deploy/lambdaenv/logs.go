package lambdaenv

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/mcpfn/mcpfn/adapters/lambda"
)

// The fields the logger adds on Lambda, named as Powertools for AWS Lambda
// names them (its "standard structured keys"), so that the queries and
// dashboards written for Powertools' logs read these too.
const (
	keyColdStart    = "cold_start"
	keyFunctionName = "function_name"
	keyFunctionMem  = "function_memory_size"
	keyFunctionARN  = "function_arn"
	keyRequestID    = "function_request_id"
	keyXRayTraceID  = "xray_trace_id"
	keyService      = "service"
	keyLambdaReqID  = "requestId" // the field of Lambda's own JSON log records
	durationSuffix  = "_ms"
)

// newLogger returns the logger MCPFN_LOG_LEVEL, the platform's log format
// and the process's place describe, writing to w: JSON when json is set
// (with the field names of Lambda's JSON log format), text otherwise.
// Every record logged with an invocation's context gets the invocation's
// requestId. On Lambda (AWS_LAMBDA_FUNCTION_NAME set) records also get
// the fields of lambdaFields, and durations are written in milliseconds.
func newLogger(w io.Writer, json bool) (*slog.Logger, error) {
	var level slog.Level
	if v := os.Getenv("MCPFN_LOG_LEVEL"); v != "" {
		if err := level.UnmarshalText([]byte(v)); err != nil {
			return nil, fmt.Errorf("MCPFN_LOG_LEVEL: %q is not debug, info, warn or error", v)
		}
	}
	ho := &slog.HandlerOptions{Level: level}
	on := onLambda()
	switch {
	case json && on:
		ho.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
			return millis(groups, lambdacontext.ReplaceAttr(groups, a))
		}
	case json:
		ho.ReplaceAttr = lambdacontext.ReplaceAttr
	case on:
		ho.ReplaceAttr = millis
	}
	var h slog.Handler
	if json {
		h = slog.NewJSONHandler(w, ho)
	} else {
		h = slog.NewTextHandler(w, ho)
	}
	if !on {
		return slog.New(invocationHandler{Handler: h}), nil
	}
	// A sandbox of provisioned concurrency was started before any
	// invocation came: none of its invocations waited for a start, as
	// Powertools counts them.
	provisioned := os.Getenv("AWS_LAMBDA_INITIALIZATION_TYPE") == "provisioned-concurrency"
	return slog.New(invocationHandler{Handler: h.WithAttrs(functionAttrs()), lambda: true, provisioned: provisioned}), nil
}

// functionAttrs are the fields of the function itself, the same on every
// record: its name, its memory (MB) and the service it is part of.
func functionAttrs() []slog.Attr {
	name := os.Getenv("AWS_LAMBDA_FUNCTION_NAME")
	as := []slog.Attr{slog.String(keyService, serviceName(name)), slog.String(keyFunctionName, name)}
	if mem, err := strconv.Atoi(os.Getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE")); err == nil {
		as = append(as, slog.Int(keyFunctionMem, mem))
	}
	return as
}

// serviceName is the service field: POWERTOOLS_SERVICE_NAME (what
// Powertools reads), else OTEL_SERVICE_NAME (what the OpenTelemetry SDK
// reads), else the function's name.
func serviceName(function string) string {
	for _, v := range []string{"POWERTOOLS_SERVICE_NAME", "OTEL_SERVICE_NAME"} {
		if s := strings.TrimSpace(os.Getenv(v)); s != "" {
			return s
		}
	}
	return function
}

// millis writes a duration in milliseconds, as a number, under its key
// with "_ms" appended (duration becomes duration_ms): slog's JSON handler
// writes a time.Duration as integer nanoseconds and its text handler as a
// Go duration string, neither of which CloudWatch Logs Insights computes
// with, while Lambda's own reports (and Powertools' metrics) are in
// milliseconds. Microseconds are kept.
func millis(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindDuration {
		return a
	}
	ms := math.Round(float64(a.Value.Duration().Nanoseconds())/1e3) / 1e3
	return slog.Float64(a.Key+durationSuffix, ms)
}

// invocationHandler adds the fields of the invocation to every record
// logged with an invocation's context: requestId (as
// lambdacontext.NewLogHandler does, and Lambda's own records have), so
// that a warning can be matched with its request in CloudWatch; and, on
// Lambda, the Powertools fields function_request_id, function_arn,
// cold_start (lambda.ColdStart: true for the first invocation of the
// sandbox, never with provisioned concurrency) and xray_trace_id (the Root
// of the invocation's trace header).
type invocationHandler struct {
	slog.Handler
	lambda      bool
	provisioned bool // cold_start is always false
}

func (h invocationHandler) Handle(ctx context.Context, r slog.Record) error {
	lc, ok := lambdacontext.FromContext(ctx)
	if ok && lc.AwsRequestID != "" {
		r.AddAttrs(slog.String(keyLambdaReqID, lc.AwsRequestID))
	}
	if !h.lambda {
		return h.Handler.Handle(ctx, r)
	}
	if cold, ok := lambda.ColdStart(ctx); ok {
		r.AddAttrs(slog.Bool(keyColdStart, cold && !h.provisioned))
	}
	if ok {
		if lc.AwsRequestID != "" {
			r.AddAttrs(slog.String(keyRequestID, lc.AwsRequestID))
		}
		if lc.InvokedFunctionArn != "" {
			r.AddAttrs(slog.String(keyFunctionARN, lc.InvokedFunctionArn))
		}
	}
	if id := xrayTraceID(ctx); id != "" {
		r.AddAttrs(slog.String(keyXRayTraceID, id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h invocationHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return invocationHandler{h.Handler.WithAttrs(as), h.lambda, h.provisioned}
}

func (h invocationHandler) WithGroup(name string) slog.Handler {
	return invocationHandler{h.Handler.WithGroup(name), h.lambda, h.provisioned}
}

// runtimeTraceIDKey is the context key under which aws-lambda-go's invoke
// loop stores the invocation's Lambda-Runtime-Trace-Id (a plain string
// key, its choice). It also sets _X_AMZN_TRACE_ID, but only when the
// sandbox runs one invocation at a time, and a variable of the process is
// not the invocation's once several run.
const runtimeTraceIDKey = "x-amzn-trace-id"

// maxTraceHeader bounds the trace header read: AWS's fit in far less.
const maxTraceHeader = 512

// xrayTraceID returns the Root of the invocation's X-Ray trace header
// (Root=1-5759e988-bd862e3fe1be46a994272793;Parent=...;Sampled=1), the
// trace id as the X-Ray console shows it and Powertools logs it; "" when
// the context has no such header.
func xrayTraceID(ctx context.Context) string {
	h, _ := ctx.Value(runtimeTraceIDKey).(string)
	if h == "" || len(h) > maxTraceHeader {
		return ""
	}
	for f := range strings.SplitSeq(h, ";") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(f), "Root="); ok {
			return v
		}
	}
	return ""
}
