package gcf

import (
	"net/http"

	"github.com/mcpfn/mcpfn/core"
)

// Handler returns the HTTP function serving srv, to register with
// functions.HTTP or funcframework.RegisterHTTPFunctionContext. The function
// answers on every path it is mounted at (Cloud Functions serve the entry
// point at "/").
func Handler(srv *core.Server) func(http.ResponseWriter, *http.Request) {
	if srv == nil {
		panic("gcf: nil server")
	}
	return srv.ServeHTTP
}
