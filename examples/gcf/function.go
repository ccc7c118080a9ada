// Package calculator is the calculator MCP server as a Google Cloud Function
// (2nd gen, HTTP trigger), with the Functions Framework for Go: init
// registers the function MCP, which serves the MCP endpoint at "/".
//
// Run it locally through the framework's own server (see cmd/main.go):
//
//	FUNCTION_TARGET=MCP LOCAL_ONLY=true PORT=8080 go run ./examples/gcf/cmd   # http://127.0.0.1:8080/
//
// Deploy it from a directory holding this package at the root of its own
// module (Cloud Functions build the module in the uploaded directory): copy
// function.go, run `go mod init example.com/calculator && go mod tidy`, then
//
//	gcloud functions deploy calculator --gen2 --runtime=go126 --trigger-http \
//	    --entry-point=MCP --region=REGION --source=.
//
// The environment configures the shared session store, the signing keys and
// the allowed origins (see examples/internal/envconfig): Cloud Functions run
// many instances, so set them whenever legacy sessions or multi round-trip
// state must survive a change of instance.
package calculator

import (
	"context"
	"log"

	"github.com/GoogleCloudPlatform/functions-framework-go/functions"

	"github.com/mcpfn/mcpfn/adapters/gcf"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/examples/internal/envconfig"
)

// AddArgs are the arguments of the add tool.
type AddArgs struct {
	Left  int `json:"left" jsonschema:"description=The first addend"`
	Right int `json:"right" jsonschema:"description=The second addend"`
}

func add(ctx context.Context, req *core.CallToolRequest, in AddArgs) (int, error) {
	return in.Left + in.Right, nil
}

func init() {
	opts, err := envconfig.Load(context.Background())
	if err != nil {
		log.Fatalf("calculator: %v", err)
	}
	srv := core.NewServer(core.Implementation{Name: "calculator", Version: "2.0.0"}, opts)
	core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two numbers."}, add)
	functions.HTTP("MCP", gcf.Handler(srv))
}
