// Command otelfn is the Lambda function of the telemetry tests: an MCP
// server started by deploy/lambdaenv's StartWith, instrumented with the
// otel module (otel.Instrument, through Options.Configure) and the
// OpenTelemetry SDK, built as a bootstrap for the provided.al2023 runtime
// (go build -tags lambda.norpc). Its one tool is add {"a":A,"b":B}.
//
// Its spans go through the SDK's batch span processor, whose own schedule
// is an hour (so that only a flush exports them), to the stdout exporter
// writing JSON to the file OTELFN_SPANS; its metrics through a periodic
// reader of an hour to the stdout metric exporter writing to
// OTELFN_METRICS. Options.Flush lists both providers unless OTELFN_FLUSH=0.
//
// Environment besides the kit's:
//
//	OTELFN_SPANS, OTELFN_METRICS  the files the exporters append to
//	OTELFN_FLUSH=0                flush nothing at the end of invocations
//	OTELFN_FLUSH_TIMEOUT          Options.FlushTimeout (a Go duration)
//	OTELFN_EXPORT_HOOK            a URL the span exporter GETs with
//	                              ?phase=start before each export (its
//	                              answer may wait: the export waits too)
//	                              and ?phase=done after it
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/deploy/lambdaenv"
	"github.com/mcpfn/mcpfn/otel"
)

type addArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "otelfn:", err)
		os.Exit(1)
	}
}

func run() error {
	spans, err := os.OpenFile(os.Getenv("OTELFN_SPANS"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	metrics, err := os.OpenFile(os.Getenv("OTELFN_METRICS"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	sx, err := stdouttrace.New(stdouttrace.WithWriter(spans))
	if err != nil {
		return err
	}
	mx, err := stdoutmetric.New(stdoutmetric.WithWriter(metrics))
	if err != nil {
		return err
	}
	var exporter sdktrace.SpanExporter = sx
	if hook := os.Getenv("OTELFN_EXPORT_HOOK"); hook != "" {
		exporter = hookedExporter{SpanExporter: sx, hook: hook}
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter, sdktrace.WithBatchTimeout(time.Hour)))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(mx, sdkmetric.WithInterval(time.Hour))))

	opts := &lambdaenv.Options{
		Configure: func(cfg *lambdaenv.Config) {
			otel.Instrument(cfg.Server, otel.Options{TracerProvider: tp, MeterProvider: mp})
		},
	}
	if os.Getenv("OTELFN_FLUSH") != "0" {
		opts.Flush = []lambda.Flusher{tp, mp}
	}
	if v := os.Getenv("OTELFN_FLUSH_TIMEOUT"); v != "" {
		if opts.FlushTimeout, err = time.ParseDuration(v); err != nil {
			return fmt.Errorf("OTELFN_FLUSH_TIMEOUT: %w", err)
		}
	}
	lambdaenv.StartWith(core.Implementation{Name: "otelfn", Version: "1.0.0"}, func(s *core.Server) {
		core.AddTool(s, &core.Tool{Name: "add", Description: "Adds two numbers."},
			func(ctx context.Context, req *core.CallToolRequest, in addArgs) (int, error) { return in.A + in.B, nil })
	}, opts)
	return nil
}

// hookedExporter tells the hook when each export starts and ends.
type hookedExporter struct {
	sdktrace.SpanExporter
	hook string
}

func (e hookedExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := get(ctx, e.hook+"?phase=start"); err != nil {
		return err
	}
	err := e.SpanExporter.ExportSpans(ctx, spans)
	get(ctx, e.hook+"?phase=done")
	return err
}

func get(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	return res.Body.Close()
}
