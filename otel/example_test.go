package otel_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/otel"
)

// One option on each half: the server's spans are children of the
// client's, the trace context travelling in params._meta and the headers.
func Example() {
	spans := tracetest.NewSpanRecorder() // in a program: sdktrace.WithBatcher(an exporter)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer tp.Shutdown(context.Background())
	defer mp.Shutdown(context.Background())
	opts := otel.Options{TracerProvider: tp, MeterProvider: mp}

	so := &core.ServerOptions{DisableRequestLog: true}
	otel.Instrument(so, opts)
	srv := core.NewServer(core.Implementation{Name: "calculator", Version: "1"}, so)
	core.AddTool(srv, &core.Tool{Name: "add"}, func(ctx context.Context, req *core.CallToolRequest, in struct{ A, B int }) (int, error) {
		return in.A + in.B, nil
	})
	ts := httptest.NewServer(nethttp.Handler(srv))
	defer ts.Close()

	ctx := context.Background()
	c, err := client.Connect(ctx, ts.URL+nethttp.DefaultPath,
		&client.Options{Middleware: []client.Middleware{otel.ClientMiddleware(opts)}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	if _, err := c.CallTool(ctx, "add", map[string]any{"A": 2, "B": 3}, nil); err != nil {
		fmt.Println(err)
		return
	}
	var clientSpan, serverParent fmt.Stringer
	for _, sp := range spans.Ended() {
		switch sp.SpanKind().String() + " " + sp.Name() {
		case "client tools/call add":
			clientSpan = sp.SpanContext().SpanID()
		case "server tools/call add":
			serverParent = sp.Parent().SpanID()
		}
	}
	fmt.Println("the server span of tools/call add is a child of the client's:", clientSpan != nil && fmt.Sprint(clientSpan) == fmt.Sprint(serverParent))
	// Output:
	// the server span of tools/call add is a child of the client's: true
}
