#!/usr/bin/env bash
# benchsmoke.sh: every benchmark of every module of go.work once (-benchtime=1x),
# so none rots; the side-by-side harness of test/bench is left out (its own
# tests run in the unit stage; it runs with `go run ./cmd/mcpbench`).
set -euo pipefail
cd "$(dirname "$0")/.."
exec go test -run '^$' -bench . -benchtime=1x $(go list work | grep -v '^github.com/mcpfn/mcpfn/test/bench')
