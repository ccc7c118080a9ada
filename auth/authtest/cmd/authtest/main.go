// Command authtest runs the test authorization server of package authtest
// on loopback, for tests driven from outside Go (test/interop). It prints
// one JSON line, then serves until SIGINT or SIGTERM:
//
//	{"issuer":"http://127.0.0.1:PORT","introspection_endpoint":"…","client_id":"…","client_secret":"…"}
//
//	go run ./auth/authtest/cmd/authtest -opaque   # opaque access tokens
package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpfn/mcpfn/auth/authtest"
)

func main() {
	opaque := flag.Bool("opaque", false, "issue opaque access tokens (known to introspection only)")
	alg := flag.String("alg", "RS256", "signature algorithm of JWT access tokens: RS256 or ES256")
	path := flag.String("issuer-path", "", "path of the issuer under the server URL")
	flag.Parse()
	as := authtest.New(&authtest.Options{OpaqueTokens: *opaque, Alg: *alg, IssuerPath: *path})
	defer as.Close()
	json.NewEncoder(os.Stdout).Encode(map[string]string{
		"issuer":                 as.Issuer,
		"introspection_endpoint": as.Issuer + "/introspect",
		"client_id":              as.IntrospectionClientID,
		"client_secret":          as.IntrospectionSecret,
	})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
}
