#!/usr/bin/env bash
# check.sh (`make check`): the inner loop. Lint (test/lint.sh) and the unit
# tests of every module with -race -short: no emulator, no Node, no
# conformance suite; tests that need one are skipped (internal/testenv).
# `make test` (test/all.sh) runs everything.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
start=$SECONDS
failed=0
declare -a results
stage() { # stage NAME COMMAND...
  local name=$1 t=$SECONDS; shift
  echo "=== $name"
  if "$@"; then results+=("PASS $name ($((SECONDS - t))s)"); else results+=("FAIL $name ($((SECONDS - t))s)"); failed=1; fi
}
stage lint test/lint.sh
# "work" is every package of every module of go.work.
stage unit-short env -u MCPFN_DYNAMODB_ENDPOINT -u MCPFN_REQUIRE_DYNAMO -u MCPFN_REQUIRE_RIE \
  go test -race -short work
echo
echo "=== summary"
printf '%s\n' "${results[@]}"
echo "total $((SECONDS - start))s"
exit $failed
