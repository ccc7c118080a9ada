// Package serve holds the small amount of process plumbing shared by the
// peer servers of the benchmark: flag parsing, listening on -addr and a clean
// shutdown on SIGTERM/SIGINT.
package serve

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Main parses -addr, serves h at /mcp and returns when the process receives
// SIGTERM or SIGINT (after a graceful shutdown) or when serving fails. It
// exits the process with a non-zero status on failure.
func Main(name string, h http.Handler) {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address HOST:PORT")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix(name + ": ")

	mux := http.NewServeMux()
	mux.Handle("/mcp", h)

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("listen: %v", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	select {
	case err := <-errc:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(os.Stderr, "%s: serve: %v\n", name, err)
			os.Exit(1)
		}
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdownCtx); err != nil {
			_ = srv.Close()
		}
	}
}
