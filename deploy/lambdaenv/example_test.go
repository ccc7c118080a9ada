package lambdaenv_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/deploy/lambdaenv"
)

type addArgs struct {
	Left  int `json:"left" jsonschema:"description=The first addend"`
	Right int `json:"right" jsonschema:"description=The second addend"`
}

func add(ctx context.Context, req *core.CallToolRequest, in addArgs) (int, error) {
	return in.Left + in.Right, nil
}

// A whole Lambda function: the environment the mcp-lambda Terraform module
// sets configures it.
func ExampleStart() {
	lambdaenv.Start(core.Implementation{Name: "calc", Version: "1.0.0"}, func(s *core.Server) {
		core.AddTool(s, &core.Tool{Name: "add", Description: "Add two numbers."}, add)
	})
}

// A whole Lambda function, instrumented: a middleware around every request
// and telemetry flushed at the end of every invocation. With
// OpenTelemetry (module github.com/mcpfn/mcpfn/otel and the SDK), the
// middleware is otel.Middleware(otel.Options{TracerProvider: tp,
// MeterProvider: mp}) and Flush lists tp and mp.
func ExampleStartWith() {
	audit := func(next core.Handler) core.Handler {
		return func(ctx context.Context, c *core.Call) (*core.Outcome, error) {
			out, err := next(ctx, c)
			log.Printf("%s %s: %s", c.Method, c.Target, out.Status(err))
			return out, err
		}
	}
	var tp lambda.Flusher // sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter))
	lambdaenv.StartWith(core.Implementation{Name: "calc", Version: "1.0.0"}, func(s *core.Server) {
		core.AddTool(s, &core.Tool{Name: "add", Description: "Add two numbers."}, add)
	}, &lambdaenv.Options{
		Middleware: []core.Middleware{audit},
		Flush:      []lambda.Flusher{tp},
		Configure:  func(cfg *lambdaenv.Config) { cfg.Server.Instructions = "Adds numbers." },
	})
}

// Load returns the options for a program that wires the server itself,
// here to add instructions.
func ExampleLoad() {
	// What Terraform and Lambda would set.
	os.Setenv("MCPFN_ALLOWED_ORIGINS", "https://app.example.com")
	os.Setenv("MCPFN_STREAMING", "1")
	os.Setenv("MCPFN_LOG_LEVEL", "error")

	cfg, err := lambdaenv.Load(context.Background(), nil)
	if err != nil {
		log.Fatal(err)
	}
	cfg.Server.Instructions = "Adds numbers."
	srv := core.NewServer(core.Implementation{Name: "calc", Version: "1.0.0"}, cfg.Server)
	core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two numbers."}, add)
	fmt.Println("origins:", cfg.Server.AllowedOrigins, "streaming:", cfg.Lambda.Streaming)
	_ = lambda.Wrap(srv, cfg.Lambda) // lambda.Start(srv, cfg.Lambda) in a function's main

	// A malformed variable is an error that names it.
	os.Setenv("MCPFN_STREAMING", "yes")
	_, err = lambdaenv.Load(context.Background(), nil)
	fmt.Println(err)

	for _, k := range []string{"MCPFN_ALLOWED_ORIGINS", "MCPFN_STREAMING", "MCPFN_LOG_LEVEL"} {
		os.Unsetenv(k)
	}
	// Output:
	// origins: [https://app.example.com] streaming: true
	// MCPFN_STREAMING: "yes" is not 1 or 0 (true or false)
}
