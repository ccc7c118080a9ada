package core_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpfn/mcpfn/core"
)

// Per-caller discovery: tools whose names start with "admin_" exist only
// for callers in the admin group. Others do not see them in tools/list,
// and a call of one is answered as for a tool the server does not have.
func ExampleServerOptions_filter() {
	isAdmin := func(p *core.Principal) bool { return p != nil && p.Subject == "alice" }
	srv := core.NewServer(core.Implementation{Name: "ops", Version: "1"}, &core.ServerOptions{
		Filter: func(ctx context.Context, r *core.Request, f core.Feature) bool {
			return !strings.HasPrefix(f.Name(), "admin_") || isAdmin(r.Principal)
		},
	})
	type none struct{}
	core.AddTool(srv, &core.Tool{Name: "status"}, func(context.Context, *core.CallToolRequest, none) (string, error) { return "ok", nil })
	core.AddTool(srv, &core.Tool{Name: "admin_restart"}, func(context.Context, *core.CallToolRequest, none) (string, error) { return "restarting", nil })

	// An anonymous caller (no Authenticator here, so no Principal).
	for _, t := range post(srv, "tools/list", "", nil, nil)["tools"].([]any) {
		fmt.Println("listed:", t.(map[string]any)["name"])
	}
	res := post(srv, "tools/call", "admin_restart", map[string]any{"name": "admin_restart"}, nil)
	fmt.Println(res["error"].(map[string]any)["message"])
	fmt.Println("cacheScope:", post(srv, "tools/list", "", nil, nil)["cacheScope"])
	// Output:
	// listed: status
	// Unknown tool: admin_restart
	// cacheScope: private
}

// Instances of one server in a process share a MemoryChangeBus; instances
// in several processes share a store's (store/dynamo.NewChangeBus, the
// Workers adapter's Durable Object). A change made through one reaches the
// listen streams held by the others within ChangePollInterval.
func ExampleMemoryChangeBus() {
	bus := &core.MemoryChangeBus{}
	a := core.NewServer(core.Implementation{Name: "notes", Version: "1"}, &core.ServerOptions{ChangeBus: bus})
	b := core.NewServer(core.Implementation{Name: "notes", Version: "1"}, &core.ServerOptions{ChangeBus: bus})
	_, _ = a, b // serve both; b.NotifyResourceUpdated(uri) reaches a's subscribers
}
