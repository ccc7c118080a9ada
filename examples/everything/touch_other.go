//go:build !unix && !(js && wasm)

package main

import (
	"context"

	"github.com/mcpfn/mcpfn/core"
)

// touchOnSignal does nothing where there is no SIGUSR1.
func touchOnSignal(context.Context, *core.Server) {}
