#!/usr/bin/env bash
# all.sh: the whole test suite (`make test`). Each stage installs what it
# needs into ~/.cache; the stages run one after the other, except the
# Terraform check, whose one-time build (~15 min on a fresh machine) runs in
# the background from the start. Prints a summary and exits non-zero if any
# stage failed.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export GOFLAGS=${GOFLAGS:-}
logdir=$(mktemp -d)
declare -a names results
failed=0

stage() { # stage NAME COMMAND...
  local name=$1; shift
  local start=$SECONDS
  echo "=== $name"
  if "$@"; then
    results+=("PASS $name ($((SECONDS - start))s)")
  else
    results+=("FAIL $name ($((SECONDS - start))s)")
    failed=1
  fi
}

# Background: build terraform and the trimmed AWS provider (cached), then check.
tf_pid=""
if [ -x tools/tfcheck/tfcheck.sh ] && [ -d infra/terraform ]; then
  (test/terraform/check.sh > "$logdir/terraform.log" 2>&1; echo $? > "$logdir/terraform.rc") &
  tf_pid=$!
fi

stage lint make -s lint
stage unit test/unit.sh
stage conformance test/conformance/all.sh
stage conformance-client test/conformance/run.sh --leg client --rev 2026-07-28,2025-11-25
[ -x test/interop/run.sh ] && stage interop test/interop/run.sh
stage benchmarks-smoke go test -run '^$' -bench . -benchtime=1x ./...
if [ -d test/bench ]; then stage bench-harness-tests bash -c 'cd test/bench && go vet ./... && go test -count=1 ./...'; fi

if [ -n "$tf_pid" ]; then
  echo "=== terraform (waiting for the background check)"
  wait "$tf_pid"
  cat "$logdir/terraform.log"
  if [ "$(cat "$logdir/terraform.rc" 2>/dev/null)" = 0 ]; then results+=("PASS terraform"); else results+=("FAIL terraform"); failed=1; fi
fi

echo
echo "=== summary"
printf '%s\n' "${results[@]}"
rm -rf "$logdir"
exit $failed
