//go:build !(js && wasm)

// Command everything is the conformance fixture: the server the official MCP
// conformance suite (@modelcontextprotocol/conformance) is run against. One
// process serves the 2026-07-28 and the 2025-* scenario sets.
//
//	go run ./examples/everything -addr 127.0.0.1:8080        # net/http, at /mcp
//	go run ./examples/everything -platform gcf -addr 127.0.0.1:8080   # functions-framework, at /
//
// Run as a Lambda bootstrap (AWS_LAMBDA_RUNTIME_API set), it serves Lambda
// events; MCPFN_STREAMING=1 selects response streaming.
//
// On every platform the environment configures what many instances share
// (MCPFN_DYNAMODB_TABLE, MCPFN_KEYS_SECRET_ID or MCPFN_STATE_KEY),
// MCPFN_ALLOWED_ORIGINS and MCPFN_LOG_LEVEL, read by the public deploy kit
// github.com/mcpfn/mcpfn/deploy/lambdaenv with the AWS SDK's default
// configuration chain (the fixture also runs outside Lambda, against
// dynalite and a loopback Secrets Manager).
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/deploy/lambdaenv"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address (host:port)")
	mode := flag.String("mode", "auto", "protocol mode: auto, modern or legacy")
	logLevel := flag.String("log", "", "log level: debug, info, warn, error (default $MCPFN_LOG_LEVEL, else info)")
	platform := flag.String("platform", "nethttp", "nethttp or gcf (lambda is chosen by AWS_LAMBDA_RUNTIME_API)")
	buffer := flag.Bool("buffered", false, "nethttp: deliver each response only when its handler returns, as buffered serverless platforms do")
	taskLease := flag.Duration("task-lease", 0, "how long a task run holds its task without a heartbeat (default core.DefaultTaskLease)")
	taskGrace := flag.Duration("task-grace", 0, "how long shutdown lets running tasks finish before cancelling them (default 0: at once)")
	taskPoll := flag.Duration("task-poll", 0, "the pollIntervalMs suggested to task clients (default core.DefaultTaskPollInterval)")
	watchEvery := flag.Duration("watch-every", 3*time.Second, "how often the watched resource changes (0: only on SIGUSR1, where there is one)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *logLevel != "" {
		os.Setenv("MCPFN_LOG_LEVEL", *logLevel)
	}
	cfg, err := lambdaenv.Load(ctx, &lambdaenv.Options{AWSConfig: func(ctx context.Context) (aws.Config, error) {
		return config.LoadDefaultConfig(ctx)
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "everything:", err)
		os.Exit(2)
	}
	opts := cfg.Server
	switch *mode {
	case "auto":
	case "modern":
		opts.Mode = core.ModeModern
	case "legacy":
		opts.Mode = core.ModeLegacy
	default:
		fmt.Fprintf(os.Stderr, "everything: unknown mode %q\n", *mode)
		os.Exit(2)
	}
	if *taskLease > 0 {
		opts.TaskLease = *taskLease
	}
	if *taskGrace > 0 {
		opts.TaskShutdownGrace = *taskGrace
	}
	if *taskPoll > 0 {
		opts.TaskPollInterval = *taskPoll
	}
	srv := newServer(opts)
	go watchResource(ctx, srv, *watchEvery)
	touchOnSignal(ctx, srv)
	if os.Getenv("AWS_LAMBDA_RUNTIME_API") != "" {
		lambda.Start(srv, cfg.Lambda)
		return
	}
	if *platform == "gcf" {
		serveGCF(ctx, srv, *addr)
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "everything:", err)
		os.Exit(1)
	}
	// The conformance runner reads this line to find the port of -addr :0.
	fmt.Printf("everything: serving MCP on http://%s%s\n", ln.Addr(), nethttp.DefaultPath)
	nopts := &nethttp.Options{}
	if *buffer {
		nopts.Middleware = buffered
	}
	if err := nethttp.ServeListener(ctx, ln, srv, nopts); err != nil {
		fmt.Fprintln(os.Stderr, "everything:", err)
		os.Exit(1)
	}
}
