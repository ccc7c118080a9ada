#!/usr/bin/env bash
# lint.sh (`make lint`): gofmt over every Go file, then, for every module of
# go.work (test/modules.sh) and outside the workspace (GOWORK=off, as users
# and the module proxy see it), go.mod and go.sum tidy and go vet clean.
# Checking each module alone proves its go.mod complete: inside the
# workspace a missing requirement would be masked by another module's.
# Last, go.work.sum must be exactly what the go command records for the
# workspace (test/policy/worksum.sh).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
failed=0
out=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$out" ]; then echo "gofmt needed:"; echo "$out"; failed=1; fi
for m in $(test/modules.sh); do
  if ! (cd "$m" && GOWORK=off go mod tidy -diff > /dev/null); then
    echo "lint: $m/go.mod or go.sum is not tidy: run (cd $m && GOWORK=off go mod tidy)"
    failed=1
  fi
  (cd "$m" && GOWORK=off go vet ./...) || { echo "lint: go vet failed in $m"; failed=1; }
done
# The edge: core, the Workers adapter and its example vet for js/wasm (the
# adapter's code builds only there), and core builds for wasip1. -trimpath,
# as mcpfn package builds a Worker, so that the tests' Worker builds find
# the dependencies compiled.
GOOS=js GOARCH=wasm go vet -trimpath ./core/... ./mcp/... ./adapters/workers/... ./examples/workers/... ||
  { echo "lint: go vet for js/wasm failed"; failed=1; }
GOOS=wasip1 GOARCH=wasm go build -o /dev/null ./core || { echo "lint: core does not build for wasip1"; failed=1; }
# go.work.sum as the go command would write it: nothing to add, nothing stale.
test/policy/worksum.sh || failed=1
exit $failed
