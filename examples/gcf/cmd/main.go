// Command main runs the calculator function locally with the Functions
// Framework's server, as the Cloud Functions Go documentation recommends:
//
//	FUNCTION_TARGET=MCP LOCAL_ONLY=true PORT=8080 go run ./examples/gcf/cmd
//
// FUNCTION_TARGET names the function served at "/" (default MCP); PORT is
// the port (default 8080); LOCAL_ONLY=true listens on 127.0.0.1 only,
// instead of every interface.
package main

import (
	"log"
	"os"

	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"

	_ "github.com/mcpfn/mcpfn/examples/gcf" // registers the function MCP
)

func main() {
	if os.Getenv("FUNCTION_TARGET") == "" {
		os.Setenv("FUNCTION_TARGET", "MCP")
	}
	port := "8080"
	if p := os.Getenv("PORT"); p != "" {
		port = p
	}
	host := ""
	if os.Getenv("LOCAL_ONLY") == "true" {
		host = "127.0.0.1"
	}
	log.Printf("calculator: serving MCP on http://%s:%s/", host, port)
	if err := funcframework.StartHostPort(host, port); err != nil {
		log.Fatalf("funcframework.StartHostPort: %v", err)
	}
}
