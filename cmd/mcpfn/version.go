package main

import (
	"runtime/debug"

	"github.com/mcpfn/mcpfn/core"
)

// clientImpl names this program in clientInfo, with the module version when
// the build knows it.
func clientImpl() core.Implementation {
	v := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return core.Implementation{Name: "mcpfn", Version: v}
}
