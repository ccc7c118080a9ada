// Command authfn is the OAuth-protected Lambda function the front-door
// emulator tests run: an MCP server with an auth.ProtectedResource served by
// adapters/lambda, built as a provided.al2023 bootstrap (go build -tags
// lambda.norpc). Every request needs the scope "mcp"; the tool "write" also
// needs "write".
//
// Environment:
//
//	AUTHFN_RESOURCE=u   the protected resource (the front door's URL + /mcp)
//	AUTHFN_ISSUER=u     the issuer of the JWT access tokens (its metadata and
//	                    JWKS are fetched from it)
//	AUTHFN_STREAMING=1  serve with Options.Streaming
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/core"
)

type noArgs struct{}

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	rs, err := auth.New(&auth.Options{
		Resource:   os.Getenv("AUTHFN_RESOURCE"),
		Issuers:    []auth.Issuer{{Issuer: os.Getenv("AUTHFN_ISSUER")}},
		Required:   []string{"mcp"},
		ToolScopes: map[string][]string{"write": {"write"}},
		Logger:     logger,
	})
	if err != nil {
		logger.Error("authfn", "err", err)
		os.Exit(1)
	}
	srv := core.NewServer(core.Implementation{Name: "authfn", Version: "1"},
		&core.ServerOptions{Authenticator: rs, Logger: logger})
	core.AddTool(srv, &core.Tool{Name: "write", Description: "Writes."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			return "written by " + req.Principal.Subject, nil
		})
	core.AddTool(srv, &core.Tool{Name: "read", Description: "Reads."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			return "read by " + req.Principal.Subject, nil
		})
	lambda.Start(srv, &lambda.Options{Streaming: os.Getenv("AUTHFN_STREAMING") == "1", Logger: logger})
}
