// Package release tests the release as a user meets it: the public modules,
// served as tools/release would tag them from a file-system module proxy
// (tools/release/proxy.sh), resolve for a fresh module outside the
// repository with `go get`, tidy cleanly, build, and `go install
// github.com/mcpfn/mcpfn/cmd/mcpfn@VERSION` works. The test needs the
// network (or a module cache holding the third-party modules) and is
// skipped under -short.
package release
