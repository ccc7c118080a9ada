// Command gosdklambda is the size peer of examples/lambda: the same add tool
// on the official Go SDK (stateless streamable HTTP) as a Lambda function
// through aws-lambda-go's lambdaurl, built the same way, so that the harness
// can compare stripped bootstrap sizes.
package main

import (
	"context"
	"net/http"

	"github.com/aws/aws-lambda-go/lambdaurl"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type addArgs struct {
	Left  int `json:"left" jsonschema:"The first addend"`
	Right int `json:"right" jsonschema:"The second addend"`
}

type sum struct {
	Sum int `json:"sum"`
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "calculator", Version: "2.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Add two numbers."},
		func(ctx context.Context, req *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, sum, error) {
			return nil, sum{in.Left + in.Right}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	lambdaurl.Start(h)
}
