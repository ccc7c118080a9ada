package main

import (
	"runtime/debug"

	"github.com/mcpfn/mcpfn/mcp"
)

// clientImpl names this program in clientInfo, with the module version when
// the build knows it.
func clientImpl() mcp.Implementation {
	v := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return mcp.Implementation{Name: "mcpfn", Version: v}
}
