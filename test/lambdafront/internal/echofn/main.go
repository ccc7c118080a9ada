// Command echofn is the Lambda function the front-door tests run: the
// handler of package echo served by adapters/lambda, built as a bootstrap for
// the provided.al2023 runtime (go build -tags lambda.norpc).
//
// Environment:
//
//	ECHOFN_STREAMING=1    serve with Options.Streaming
//	ECHOFN_RELEASE_URL=u  /sse fetches u (GET) after flushing its first event
//	                      and before writing the others
package main

import (
	"log/slog"
	"os"

	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/test/lambdafront/internal/echo"
)

func main() {
	opts := &lambda.Options{
		Streaming: os.Getenv("ECHOFN_STREAMING") == "1",
		Logger:    slog.New(slog.NewTextHandler(os.Stderr, nil)),
	}
	lambda.Start(echo.Handler(os.Getenv("ECHOFN_RELEASE_URL")), opts)
}
