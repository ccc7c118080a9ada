//go:build js && wasm

// Command changeserver is the Worker of the change-notification tests in
// workerd: a resource, and a tool that publishes its update, served with
// workers.ServerOptions, so that changes cross Go instances through the
// change log in Durable Objects (durable.Changes).
package main

import (
	"context"

	"github.com/mcpfn/mcpfn/adapters/workers"
	"github.com/mcpfn/mcpfn/core"
)

type none struct{}

func main() {
	srv := core.NewServer(core.Implementation{Name: "changes-test", Version: "1.0.0"}, workers.ServerOptions(nil))
	srv.AddResource(&core.Resource{URI: "test://r", Name: "r"},
		func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: "r"}}}, nil
		})
	core.AddTool(srv, &core.Tool{Name: "touch", Description: "Publish an update of test://r."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
			srv.NotifyResourceUpdated("test://r")
			return "touched", nil
		})
	workers.Serve(srv, nil)
}
