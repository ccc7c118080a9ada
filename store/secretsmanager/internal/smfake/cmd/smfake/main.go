// Command smfake serves the AWS Secrets Manager wire protocol on loopback
// (package store/secretsmanager/internal/smfake) with one secret of signing keys in the format of
// store/secretsmanager, for running the examples against
// MCPFN_KEYS_SECRET_ID without AWS:
//
//	go run ./store/secretsmanager/internal/smfake/cmd/smfake -addr 127.0.0.1:0 -state /tmp/sm.json
//	smfake: serving Secrets Manager on http://127.0.0.1:PORT (secret mcpfn/state-keys)
//
//	AWS_ENDPOINT_URL_SECRETS_MANAGER=http://127.0.0.1:PORT MCPFN_KEYS_SECRET_ID=mcpfn/state-keys \
//	AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local go run ./examples/everything
//
//	curl -X POST 'http://127.0.0.1:PORT/_admin/rotate'            # new AWSCURRENT, old -> AWSPREVIOUS
//	curl -X POST 'http://127.0.0.1:PORT/_admin/rotate?stage=AWSPENDING'
//	curl -X POST 'http://127.0.0.1:PORT/_admin/promote'           # AWSPENDING -> AWSCURRENT
//	curl -X POST 'http://127.0.0.1:PORT/_admin/retire-previous'   # delete the AWSPREVIOUS version
//	curl 'http://127.0.0.1:PORT/_admin/stages'
//
// The secret is created with one AWSCURRENT version holding a random key
// unless the state file already holds it. It runs until SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpfn/mcpfn/store/secretsmanager/internal/smfake"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (host:port)")
	state := flag.String("state", "", "state file: loaded when it exists, written after every change (default: memory only)")
	name := flag.String("secret", "mcpfn/state-keys", "name of the secret to create if absent")
	flag.Parse()
	if err := run(*addr, *state, *name); err != nil {
		fmt.Fprintln(os.Stderr, "smfake:", err)
		os.Exit(1)
	}
}

func run(addr, state, name string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := smfake.New()
	if state != "" {
		var err error
		if srv, err = smfake.Open(state); err != nil {
			return err
		}
	}
	if srv.Staged(name, smfake.StageCurrent) == "" {
		if err := srv.Put(name, smfake.NewVersionID(), smfake.NewKeyValue()); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("smfake: serving Secrets Manager on http://%s (secret %s)\n", ln.Addr(), name)
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
