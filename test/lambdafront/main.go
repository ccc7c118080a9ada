// Command lambdafront serves HTTP in front of a Lambda function (a
// provided.al2023 bootstrap), the way a Function URL or API Gateway would:
// each request becomes the integration's event, is invoked, and the
// function's answer (buffered JSON, or a streamed prelude and body) becomes
// the HTTP response.
//
// Usage:
//
//	lambdafront -bootstrap ./bootstrap [-addr 127.0.0.1:9000] [-door url|apigw-v1|apigw-v2]
//	            [-mode auto|buffered|streaming] [-runtime rie|stream] [-concurrency 4]
//	            [-timeout 30s] [-rie PATH] [-freeze] [-quiet] [-v]
//
// Two backends run the function, each as a pool of -concurrency copies of
// it, each copy running one invocation at a time; further requests wait for
// a free one:
//
//   - rie (the default): the AWS Lambda Runtime Interface Emulator
//     (aws-lambda-rie), one per copy. The emulator buffers streamed
//     responses: the client receives them whole, when the function has
//     finished.
//   - stream: lambdalocal.Function serves the Lambda Runtime API itself,
//     one endpoint per copy, and passes a streamed response through to the
//     client as it arrives, chunk by chunk, as Lambda does. A copy whose
//     invocation times out, or whose client goes away mid-stream, is killed
//     and started again on its next invocation. With -freeze, a process
//     that waits for an invocation is stopped (SIGSTOP) until one comes,
//     as Lambda freezes a sandbox once the function asks for the next
//     invocation: work the function left for after its response and did
//     not finish before asking stays undone.
//
// The front door itself is lambdalocal.Door.
//
// Install the emulator with test/lambdafront/install-rie.sh. Without -rie,
// lambdafront looks for it in $MCPFN_RIE, ${MCPFN_TOOLS:-$HOME/.cache/mcpfn/bin}
// and $PATH. The function inherits lambdafront's environment (except
// AWS_LAMBDA_MAX_CONCURRENCY). Logs go to stderr; SIGTERM or SIGINT stops
// the server and the emulators.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/lambdalocal"
)

func main() {
	var (
		addr        = flag.String("addr", "127.0.0.1:9000", "address to serve HTTP on")
		door        = flag.String("door", "url", "integration to imitate: url, apigw-v1 or apigw-v2")
		mode        = flag.String("mode", "auto", "invoke mode: auto (accept both), buffered or streaming")
		backend     = flag.String("runtime", "rie", "backend: rie (the emulator; buffers streams) or stream (own Runtime API; streams)")
		bootstrap   = flag.String("bootstrap", "", "the function's bootstrap executable (required)")
		rie         = flag.String("rie", "", "path of aws-lambda-rie (default: $MCPFN_RIE, the install-rie.sh location, $PATH)")
		concurrency = flag.Int("concurrency", 4, "number of copies of the function, that is of concurrent invocations")
		timeout     = flag.Duration("timeout", 30*time.Second, "function timeout (rounded up to whole seconds)")
		freeze      = flag.Bool("freeze", false, "stop (SIGSTOP) each function process while it waits for an invocation, as Lambda freezes sandboxes (-runtime stream)")
		quiet       = flag.Bool("quiet", false, "discard the emulators' and the functions' output")
		verbose     = flag.Bool("v", false, "debug logging")
	)
	flag.Parse()
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if flag.NArg() > 0 || *bootstrap == "" {
		fmt.Fprintln(os.Stderr, "usage: lambdafront -bootstrap PATH [flags]")
		flag.PrintDefaults()
		os.Exit(2)
	}
	d, err := lambdalocal.ParseIntegration(*door)
	var m Mode
	if err == nil {
		m, err = lambdalocal.ParseInvokeMode(*mode, d)
	}
	var rt Runtime
	if err == nil {
		rt, err = parseRuntime(*backend)
	}
	if err == nil {
		err = run(logger, config{
			Addr: *addr, Door: d, Mode: m, Runtime: rt, Bootstrap: *bootstrap, RIE: *rie,
			Concurrency: *concurrency, Timeout: *timeout, Env: os.Environ(), Freeze: *freeze,
			Log: logWriter(*quiet), Logger: logger,
		})
	}
	if err != nil {
		logger.Error("lambdafront", "err", err)
		os.Exit(1)
	}
}

func logWriter(quiet bool) io.Writer {
	if quiet {
		return io.Discard
	}
	return &mcptest.LockedWriter{W: os.Stderr}
}

// run serves until SIGTERM or SIGINT.
func run(logger *slog.Logger, cfg config) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	s, err := start(ctx, cfg)
	if err != nil {
		return err
	}
	logger.Info("serving", "url", s.URL(), "door", cfg.Door, "mode", cfg.Mode, "runtime", cfg.Runtime,
		"bootstrap", cfg.Bootstrap, "concurrency", cfg.Concurrency)
	select {
	case <-ctx.Done():
		logger.Info("shutting down")
	case err = <-s.done:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return errors.Join(err, s.Shutdown(sctx))
}

// config configures a front door.
type config struct {
	Addr        string
	Door        Door
	Mode        Mode
	Runtime     Runtime // empty means RuntimeRIE
	Bootstrap   string
	RIE         string // path of aws-lambda-rie (RuntimeRIE)
	Concurrency int
	Timeout     time.Duration
	Env         []string
	Log         io.Writer // the emulators' and functions' output
	Logger      *slog.Logger
	// Freeze stops each function process while it waits for an
	// invocation (RuntimeStream); OnFreeze is called once one is stopped
	// (see poolConfig).
	Freeze   bool
	OnFreeze func(sandbox, pid, served int)
}

// The integrations and invoke modes, as lambdalocal names them.
type (
	Door = lambdalocal.Integration
	Mode = lambdalocal.InvokeMode
)

const (
	DoorFunctionURL  = lambdalocal.FunctionURL
	DoorAPIGatewayV1 = lambdalocal.RESTAPI
	DoorAPIGatewayV2 = lambdalocal.HTTPAPI

	ModeAuto      = lambdalocal.Auto
	ModeBuffered  = lambdalocal.Buffered
	ModeStreaming = lambdalocal.Streaming
)

// Runtime is the backend that runs the function.
type Runtime string

const (
	RuntimeRIE    Runtime = "rie"    // a pool of aws-lambda-rie emulators (buffers streamed responses)
	RuntimeStream Runtime = "stream" // lambdalocal's Runtime API (passes streamed responses through)
)

func parseRuntime(s string) (Runtime, error) {
	switch r := Runtime(s); r {
	case RuntimeRIE, RuntimeStream:
		return r, nil
	}
	return "", fmt.Errorf("unknown runtime %q (want rie or stream)", s)
}

// backend runs the function: a pool of emulators, or a lambdalocal.Function.
type backend interface {
	lambdalocal.Invoker
	Close() error
}

// server is a running front door.
type server struct {
	pool backend
	srv  *http.Server
	ln   net.Listener
	done chan error // receives the error that stopped the server
}

// start starts the emulators and serves on cfg.Addr (port 0 picks one).
func start(ctx context.Context, cfg config) (*server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Mode == "" {
		cfg.Mode = ModeAuto
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Runtime == "" {
		cfg.Runtime = RuntimeRIE
	}
	if cfg.Freeze && cfg.Runtime != RuntimeStream {
		return nil, errors.New("-freeze needs -runtime stream: the emulator runs the Runtime API itself")
	}
	var rie string
	if cfg.Runtime == RuntimeRIE {
		var err error
		if rie, err = findRIE(cfg.RIE); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	var p backend
	if cfg.Runtime == RuntimeStream {
		p, err = lambdalocal.NewFunction(lambdalocal.Config{
			Bootstrap: cfg.Bootstrap, Env: cfg.Env, Sandboxes: cfg.Concurrency,
			Timeout: cfg.Timeout, Output: cfg.Log, Logger: cfg.Logger,
			Freeze: cfg.Freeze, OnFreeze: cfg.OnFreeze,
		})
	} else {
		p, err = newPool(ctx, poolConfig{
			RIE: rie, Bootstrap: cfg.Bootstrap, Size: cfg.Concurrency, Timeout: cfg.Timeout,
			Env: cfg.Env, Log: cfg.Log, Logger: cfg.Logger,
		})
	}
	if err != nil {
		ln.Close()
		return nil, err
	}
	fd := &lambdalocal.Door{Integration: cfg.Door, Mode: cfg.Mode, Timeout: cfg.Timeout, Function: p, Logger: cfg.Logger}
	s := &server{
		pool: p,
		ln:   ln,
		done: make(chan error, 1),
		srv: &http.Server{
			Handler:           fd,
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      cfg.Timeout + 15*time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
		},
	}
	go func() {
		if err := s.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.done <- err
		}
	}()
	return s, nil
}

// URL is the front door's base URL.
func (s *server) URL() string { return "http://" + s.ln.Addr().String() }

// Shutdown stops accepting requests, waits for those in flight (until ctx
// ends), then stops the emulators or functions.
func (s *server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	s.pool.Close()
	return err
}

// invokeAll runs one invocation and returns the whole payload.
func invokeAll(ctx context.Context, fn lambdalocal.Invoker, event []byte) ([]byte, error) {
	res, err := fn.Invoke(ctx, event)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	return io.ReadAll(io.LimitReader(res.Body, 4*maxPayload))
}

// maxPayload is Lambda's limit on a synchronous invocation's payloads.
const maxPayload = 6 << 20
