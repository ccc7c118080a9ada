// Command mcpfnlambda (built by test/bench's harness) is the calculator on mcpfn's core and Lambda adapter
// alone, with in-memory state: the feature set of servers/gosdklambda, for
// the bootstrap size comparison.
package main

import (
	"context"

	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/core"
)

type addArgs struct {
	Left  int `json:"left" jsonschema:"description=The first addend"`
	Right int `json:"right" jsonschema:"description=The second addend"`
}

func main() {
	srv := core.NewServer(core.Implementation{Name: "calculator", Version: "2.0.0"}, nil)
	core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two numbers."},
		func(ctx context.Context, req *core.CallToolRequest, in addArgs) (int, error) {
			return in.Left + in.Right, nil
		})
	lambda.Start(srv, &lambda.Options{Streaming: true})
}
