package gcf

import (
	"net/http"

	"github.com/mcpfn/mcpfn/core"
)

// Handler returns the HTTP function serving srv, to register with
// functions.HTTP or funcframework.RegisterHTTPFunctionContext. The function
// answers on every path it is mounted at (Cloud Functions serve the entry
// point at "/"). Handler panics if srv is nil.
//
// When srv seals requestState with a key of its own (no
// ServerOptions.Keys: [core.Server.PerProcessKeys]), Handler logs one
// warning to srv's logger naming the fix: Cloud Functions run many
// instances, and a multi round-trip request whose retry reaches another
// instance fails with "Invalid or expired requestState". Likewise, when srv
// has task tools ([core.Server.ServesTasks]) and keeps its tasks in the
// instance's memory (no ServerOptions.TaskStore:
// [core.Server.PerProcessTasks]), Handler logs one warning naming the fix:
// a poll that reaches another instance finds no task. Both are checked when
// Handler is called: add the tools first.
func Handler(srv *core.Server) func(http.ResponseWriter, *http.Request) {
	if srv == nil {
		panic("gcf: nil server")
	}
	if srv.PerProcessKeys() {
		srv.Logger().Warn(perProcessKeysWarning)
	}
	if srv.ServesTasks() && srv.PerProcessTasks() {
		srv.Logger().Warn(perProcessTasksWarning)
	}
	return srv.ServeHTTP
}

// perProcessKeysWarning is the warning Handler logs for a server without
// shared keys.
const perProcessKeysWarning = "gcf: no shared signing keys: this instance seals requestState with a random key of its own, " +
	"and Cloud Functions run many instances, so a multi round-trip request whose retry reaches another instance (or this one after a restart) " +
	"fails with \"Invalid or expired requestState\"; share the keys: set MCPFN_STATE_KEY from a Secret Manager secret " +
	"(deploy/gcfenv; the mcp-gcf Terraform module sets it), or ServerOptions.Keys to core.StaticKeys from a secret or a core.KeyProvider"

// perProcessTasksWarning is the warning Handler logs for a server with task
// tools and no shared task store. A warning, as for the keys: it is right
// for a function limited to one instance, which Handler cannot see.
const perProcessTasksWarning = "gcf: task tools, but the tasks live in this instance's memory (no ServerOptions.TaskStore), " +
	"and Cloud Functions run many instances: a tasks/get, tasks/update or tasks/cancel that reaches another instance " +
	"finds no task (-32602), although the Tasks extension makes a new task readable at once; keep the tasks in a store " +
	"every instance shares (ServerOptions.TaskStore), or run one instance and say so: max_instance_count = 1 in the " +
	"mcp-gcf Terraform module, or --max-instances=1 with MCPFN_MAX_INSTANCES=1 (deploy/gcfenv then keeps the tasks " +
	"in store/memory's TaskStore)"
