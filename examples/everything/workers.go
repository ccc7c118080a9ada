//go:build js && wasm

package main

import (
	"context"

	"github.com/mcpfn/mcpfn/adapters/workers"
	"github.com/mcpfn/mcpfn/core"
)

// main, built for js/wasm, serves the fixture as a Cloudflare Worker
// (`mcpfn package workers`): the conformance door of test/conformance's
// workers adapter.
func main() {
	srv := newServer(&core.ServerOptions{})
	go watchResource(context.Background(), srv)
	workers.Serve(srv, nil)
}
