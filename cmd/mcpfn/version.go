package main

import (
	"bufio"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/mcpfn/mcpfn/mcp"
)

// protocolVersions are the revisions package client speaks, newest first:
// the stateless 2026-07-28 and the initialize-based 2025 revisions.
var protocolVersions = []string{mcp.ProtocolVersion20260728, mcp.ProtocolVersion20251125,
	mcp.ProtocolVersion20250618, mcp.ProtocolVersion20250326}

// moduleVersion is the version of the module this program was built from:
// a tag (go install ...@v1.2.3), a pseudo-version, or "devel" when the
// build does not say.
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// clientImpl names this program in clientInfo, with the module version when
// the build knows it.
func clientImpl() mcp.Implementation {
	return mcp.Implementation{Name: "mcpfn", Version: moduleVersion()}
}

// versionDoc is the JSON document of --version.
func versionDoc() json.RawMessage {
	b, _ := json.Marshal(struct {
		Name             string   `json:"name"`
		Version          string   `json:"version"`
		Go               string   `json:"go"`
		ProtocolVersions []string `json:"protocolVersions"`
	}{"mcpfn", moduleVersion(), runtime.Version(), protocolVersions})
	return b
}

// writeVersion is --version for people.
func writeVersion(w *bufio.Writer, _ json.RawMessage) {
	w.WriteString("mcpfn " + moduleVersion() + " (" + runtime.Version() + ")\n")
	w.WriteString("protocol revisions: " + strings.Join(protocolVersions, ", ") + "\n")
}
