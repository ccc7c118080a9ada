//go:build js && wasm

package main

import (
	"context"
	"time"

	"github.com/mcpfn/mcpfn/adapters/workers"
)

// main, built for js/wasm, serves the fixture as a Cloudflare Worker
// (`mcpfn package workers`), with sessions, tasks and keys shared through
// Durable Objects and a secret: the conformance door of test/conformance's
// workers and workers-fresh adapters.
func main() {
	srv := newServer(workers.ServerOptions(nil))
	go watchResource(context.Background(), srv, 3*time.Second)
	workers.Serve(srv, nil)
}
