// Command calculator is the smallest useful mcpfn server: one typed tool,
// served on net/http with the in-memory defaults.
//
//	go run ./examples/calculator            # serves http://127.0.0.1:8080/mcp
//	go run ./examples/calculator -addr 127.0.0.1:9000
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/core"
)

// AddArgs are the arguments of the add tool. The tool's input schema is
// derived from this type; descriptions come from the jsonschema tags.
type AddArgs struct {
	Left  int `json:"left" jsonschema:"description=The first addend"`
	Right int `json:"right" jsonschema:"description=The second addend"`
}

func add(ctx context.Context, req *core.CallToolRequest, in AddArgs) (int, error) {
	return in.Left + in.Right, nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()

	srv := core.NewServer(core.Implementation{Name: "calculator", Version: "2.0.0"}, nil)
	core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two numbers."}, add)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Listen first, so that the line names the real port (-addr 127.0.0.1:0).
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("calculator: serving MCP on http://%s/mcp", ln.Addr())
	if err := nethttp.ServeListener(ctx, ln, srv, nil); err != nil {
		log.Fatal(err)
	}
}
