// Command bench is the server of the side-by-side benchmark harness
// (test/bench): the three tools every peer serves (add, echo, payload), plus
// ask, a two-round multi round-trip tool only mcpfn serves, in auto mode
// (2026-07-28 and legacy clients), exactly as a user would write them.
//
//	go run ./examples/bench -addr 127.0.0.1:8080
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/core"
)

type AddArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

type Sum struct {
	Sum int `json:"sum"`
}

type EchoArgs struct {
	Text string `json:"text"`
}

type AskArgs struct {
	Greeting string `json:"greeting"`
}

type nameForm struct {
	Name string `json:"name"`
}

var askForm = core.MustForm[nameForm]()

type PayloadArgs struct {
	N int `json:"n" jsonschema:"minimum=0,maximum=16777216"`
}

func newServer() *core.Server {
	// The servers it is compared with (go-sdk, mcp-go, the bare net/http
	// floor) log nothing per request, so neither does this one: the
	// comparison is of protocol work.
	srv := core.NewServer(core.Implementation{Name: "mcpfn-bench", Version: "1.0.0"},
		&core.ServerOptions{DisableRequestLog: true})
	core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two integers."},
		func(ctx context.Context, req *core.CallToolRequest, in AddArgs) (Sum, error) {
			return Sum{in.A + in.B}, nil
		})
	core.AddTool(srv, &core.Tool{Name: "echo", Description: "Echo the text."},
		func(ctx context.Context, req *core.CallToolRequest, in EchoArgs) (string, error) {
			return in.Text, nil
		}, &core.ToolOptions{StructuredOutput: core.OutputDisabled})
	core.AddTool(srv, &core.Tool{Name: "payload", Description: "Return n bytes of text."},
		func(ctx context.Context, req *core.CallToolRequest, in PayloadArgs) (string, error) {
			return strings.Repeat("x", in.N), nil
		}, &core.ToolOptions{StructuredOutput: core.OutputDisabled})
	core.AddTool(srv, &core.Tool{Name: "ask", Description: "Ask the user for a name, then greet (a two-round multi round-trip call)."},
		func(ctx context.Context, req *core.CallToolRequest, in AskArgs) (string, error) {
			n, action, err := askForm.Answer(req.Input, "name")
			switch {
			case err != nil:
				return "", err // the answer does not fit the form
			case action == "": // no answer yet: ask
				return "", core.InputRequired(core.InputRequests{"name": askForm.Request("What is your name?")}, "asked")
			case action != core.ActionAccept: // declined or cancelled: the call ends
				return in.Greeting + "!", nil
			}
			return in.Greeting + ", " + n.Name + "!", nil
		}, &core.ToolOptions{StructuredOutput: core.OutputDisabled})
	return srv
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := nethttp.Serve(ctx, *addr, newServer(), nil); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
