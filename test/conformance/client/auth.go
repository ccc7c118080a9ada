package main

import (
	"context"
	"errors"

	"github.com/mcpfn/mcpfn/client"
)

// errAuthNotImplemented: the authorization scenarios need client/oauth.
var errAuthNotImplemented = errors.New("authorization scenarios are not implemented yet (client/oauth)")

// tokenSource returns the token source for an authorization scenario
// ("auth/..."), built from the scenario's context (sc.Raw holds the whole
// MCP_CONFORMANCE_CONTEXT: client credentials, keys, assertions). It is the
// one place the OAuth client is wired into the conformance client.
func tokenSource(ctx context.Context, scenario, url string, sc *scenarioContext) (client.TokenSource, error) {
	return nil, errAuthNotImplemented
}
