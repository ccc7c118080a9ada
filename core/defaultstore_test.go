package core_test

import (
	"testing"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/store/storetest"
)

// The store a server uses when ServerOptions.SessionStore is nil passes the
// suite every store must pass.
func TestDefaultSessionStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) core.SessionStore {
		return core.SessionStoreOf(core.NewServer(core.Implementation{Name: "d", Version: "1"}, nil))
	})
}
