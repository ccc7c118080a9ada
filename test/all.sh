#!/usr/bin/env bash
# all.sh: the whole test suite (`make test`). Each stage installs what it
# needs into ~/.cache; the stages run one after the other, except the
# Terraform check (test/terraform/check.sh), whose one-time build (~3 to 5
# min on a fresh machine) runs in the background from the start. Prints a
# summary with each stage's duration and exits non-zero if any stage failed.
# Every stage covers every module of go.work (test/modules.sh); `make check` (test/check.sh) is the quick tier.
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

# Background: build OpenTofu and the tfcheck schema provider (cached), then check.
# It runs at a lower priority (nice): the foreground stages are the longer
# path, and the background's builds fill the time they leave idle.
tf_pid="" all_start=$SECONDS
if [ -x tools/tfcheck/tfcheck.sh ] && [ -d infra/terraform ]; then
  (s=$(date +%s); nice -n 10 test/terraform/check.sh > "$logdir/terraform.log" 2>&1; echo $? > "$logdir/terraform.rc"
   echo $(($(date +%s) - s)) > "$logdir/terraform.secs") &
  tf_pid=$!
fi

stage lint test/lint.sh
stage unit test/unit.sh
stage conformance test/conformance/all.sh
stage conformance-client test/conformance/run.sh --leg client --rev 2026-07-28,2025-11-25
[ -x test/interop/run.sh ] && stage interop test/interop/run.sh
[ -x test/interop/client.sh ] && stage interop-client test/interop/client.sh
[ -x test/interop/auth.sh ] && stage interop-auth test/interop/auth.sh
[ -x test/interop/peers.sh ] && stage interop-peers test/interop/peers.sh
[ -x test/interop-tasks/run.sh ] && stage interop-tasks test/interop-tasks/run.sh
[ -x test/interop-ext-tasks/run.sh ] && stage interop-ext-tasks test/interop-ext-tasks/run.sh
# Every benchmark once, except the side-by-side harness of test/bench (whose
# own tests ran in the unit stage; it runs with `go run ./cmd/mcpbench`).
stage benchmarks-smoke bash -c 'go test -run "^$" -bench . -benchtime=1x $(go list work | grep -v "^github.com/mcpfn/mcpfn/test/bench")'

if [ -n "$tf_pid" ]; then
  echo "=== terraform (waiting for the background check)"
  wait "$tf_pid"
  cat "$logdir/terraform.log"
  tf="terraform ($(cat "$logdir/terraform.secs" 2>/dev/null)s, in the background)"
  if [ "$(cat "$logdir/terraform.rc" 2>/dev/null)" = 0 ]; then results+=("PASS $tf"); else results+=("FAIL $tf"); failed=1; fi
fi

echo
echo "=== summary"
printf '%s\n' "${results[@]}"
echo "total $((SECONDS - all_start))s"
rm -rf "$logdir"
exit $failed
