// Command otel is the calculator's add tool with OpenTelemetry: a span per
// MCP request (its parent taken from params._meta.traceparent or the HTTP
// traceparent header) and the mcp.server.operation.duration histogram,
// exported as the standard OTEL_* environment variables say (through
// go.opentelemetry.io/contrib/exporters/autoexport and
// .../propagators/autoprop). It flushes both providers when it ends on
// SIGTERM or SIGINT.
//
//	OTEL_TRACES_EXPORTER=console OTEL_METRICS_EXPORTER=console go run ./examples/otel   # print to stdout
//	OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf \
//	    OTEL_SERVICE_NAME=calculator go run ./examples/otel -addr 127.0.0.1:9000     # OTLP/HTTP to a collector
//
// OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER default to otlp (OTLP over
// HTTP/protobuf to localhost:4318 unless OTEL_EXPORTER_OTLP_* say otherwise);
// "none" turns one off. OTEL_PROPAGATORS defaults to tracecontext,baggage.
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/contrib/propagators/autoprop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/core"
	mcpotel "github.com/mcpfn/mcpfn/otel"
)

// AddArgs are the arguments of the add tool, as in examples/calculator.
type AddArgs struct {
	Left  int `json:"left" jsonschema:"description=The first addend"`
	Right int `json:"right" jsonschema:"description=The second addend"`
}

func add(ctx context.Context, req *core.CallToolRequest, in AddArgs) (int, error) {
	return in.Left + in.Right, nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr); err != nil {
		log.Fatal(err)
	}
}

// run serves until ctx ends, then flushes the spans and metrics.
func run(ctx context.Context, addr string) (err error) {
	spans, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return err
	}
	metrics, err := autoexport.NewMetricReader(ctx)
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(metrics))
	defer func() {
		// Flush what is buffered; a collector that does not answer in
		// time does not hold the process.
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = errors.Join(err, tp.Shutdown(sctx), mp.Shutdown(sctx))
	}()

	// The setup: the options, instrumenting the server's options, the server.
	opts := mcpotel.Options{TracerProvider: tp, MeterProvider: mp, Propagator: autoprop.NewTextMapPropagator()}
	so := &core.ServerOptions{}
	mcpotel.Instrument(so, opts)
	srv := core.NewServer(core.Implementation{Name: "calculator", Version: "2.0.0"}, so)
	core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two numbers."}, add)

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	log.Printf("otel: serving MCP on http://%s/mcp", ln.Addr())
	return nethttp.ServeListener(ctx, ln, srv, nil)
}
