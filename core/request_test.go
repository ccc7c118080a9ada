package core_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

// TestCapabilitiesNotSharedBetweenServers checks that a handler that changes
// its request's client capabilities changes nothing another server (or a
// later request) decides on: the other server still refuses a call that
// needs sampling with -32021.
func TestCapabilitiesNotSharedBetweenServers(t *testing.T) {
	t.Parallel()
	a := core.NewServer(testImpl, nil)
	core.AddTool(a, &core.Tool{Name: "grant", Description: "Changes its own capabilities."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			req.ClientCapabilities.Sampling = &core.SamplingCapabilities{}
			if req.ClientCapabilities.Elicitation != nil {
				req.ClientCapabilities.Elicitation.Form = nil
				req.ClientCapabilities.Elicitation.URL = map[string]any{}
			}
			// The handler's own check still sees what the client declared.
			if err := req.RequireCapabilities(&core.ClientCapabilities{Sampling: &core.SamplingCapabilities{}}); err == nil {
				t.Errorf("RequireCapabilities believed the handler's change")
			}
			return "granted", nil
		})
	b := core.NewServer(testImpl, nil)
	core.AddTool(b, &core.Tool{Name: "needs_sampling", Description: "Needs sampling."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) { return "sampled", nil }, &core.ToolOptions{RequiredCapabilities: &core.ClientCapabilities{Sampling: &core.SamplingCapabilities{}}})
	core.AddTool(b, &core.Tool{Name: "needs_url", Description: "Needs URL elicitation."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			if err := req.RequireCapabilities(&core.ClientCapabilities{Elicitation: &core.ElicitationCapabilities{URL: map[string]any{}}}); err != nil {
				return "", err
			}
			return "url", nil
		})

	for _, caps := range []map[string]any{
		{}, // the shared empty value
		{"elicitation": map[string]any{"form": map[string]any{}}}, // a cached decoded value
	} {
		for i := 0; i < 2; i++ { // the second round hits the caches
			if got := textOf(callReq(1, "grant", nil).withCaps(caps).do(t, a).result(t)); got != "granted" {
				t.Fatalf("grant: %q", got)
			}
			callReq(2, "needs_sampling", nil).withCaps(caps).do(t, b).
				wantError(t, http.StatusBadRequest, core.CodeMissingRequiredClientCapability)
			callReq(3, "needs_url", nil).withCaps(caps).do(t, b).
				wantError(t, http.StatusBadRequest, core.CodeMissingRequiredClientCapability)
		}
	}
}
