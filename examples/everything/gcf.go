//go:build !(js && wasm)

package main

import (
	"context"
	"fmt"
	"net"
	"os"

	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"

	"github.com/mcpfn/mcpfn/adapters/gcf"
	"github.com/mcpfn/mcpfn/core"
)

// serveGCF serves the fixture through the Functions Framework's own local
// server, as Cloud Functions would run it (the function at "/").
func serveGCF(ctx context.Context, srv *core.Server, addr string) {
	host, port, err := net.SplitHostPort(addr)
	if err == nil && port == "0" {
		// The framework needs a port number: take a free one.
		var ln net.Listener
		if ln, err = net.Listen("tcp", addr); err == nil {
			_, port, _ = net.SplitHostPort(ln.Addr().String())
			ln.Close()
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "everything:", err)
		os.Exit(2)
	}
	if err := funcframework.RegisterHTTPFunctionContext(ctx, "/", gcf.Handler(srv)); err != nil {
		fmt.Fprintln(os.Stderr, "everything:", err)
		os.Exit(1)
	}
	fmt.Printf("everything: serving MCP on http://%s/\n", net.JoinHostPort(host, port))
	errc := make(chan error, 1)
	go func() { errc <- funcframework.StartHostPort(host, port) }()
	select {
	case err := <-errc: // the framework's server has no shutdown: it returns on failure only
		fmt.Fprintln(os.Stderr, "everything:", err)
		os.Exit(1)
	case <-ctx.Done():
		srv.Close()
	}
}
