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
// instance fails with "Invalid or expired requestState".
func Handler(srv *core.Server) func(http.ResponseWriter, *http.Request) {
	if srv == nil {
		panic("gcf: nil server")
	}
	if srv.PerProcessKeys() {
		srv.Logger().Warn(perProcessKeysWarning)
	}
	return srv.ServeHTTP
}

// perProcessKeysWarning is the warning Handler logs for a server without
// shared keys.
const perProcessKeysWarning = "gcf: no shared signing keys: this instance seals requestState with a random key of its own, " +
	"and Cloud Functions run many instances, so a multi round-trip request whose retry reaches another instance (or this one after a restart) " +
	"fails with \"Invalid or expired requestState\"; share the keys: set MCPFN_STATE_KEY from a Secret Manager secret " +
	"(deploy/gcfenv; the mcp-gcf Terraform module sets it), or ServerOptions.Keys to core.StaticKeys from a secret or a core.KeyProvider"
