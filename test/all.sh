#!/usr/bin/env bash
# all.sh: the whole test suite (`make test`). Each stage installs what it
# needs into ~/.cache. Lint, then the unit tests; then the peer stages
# (conformance per adapter, interop, benchmarks), a few at a time; the
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

# The peer stages: the conformance suite once per adapter, the client
# scenarios, the interop runs against the official SDKs, and every
# benchmark once. They spend most of their time waiting on Node peers and
# on servers, so they run ${MCPFN_PEER_JOBS:-2} at a time, longest first,
# each with its own log, printed whole when it ends.
jobs=() # "NAME COMMAND..." each
for a in $(test/conformance/all.sh --list); do
  jobs+=("conformance-$a test/conformance/run.sh --rev 2025-11-25,2026-07-28 --adapter $a")
done
# Every benchmark once, except the side-by-side harness of test/bench (whose
# own tests ran in the unit stage; it runs with `go run ./cmd/mcpbench`).
jobs+=("benchmarks-smoke test/benchsmoke.sh")
jobs+=("conformance-client test/conformance/run.sh --leg client --rev 2026-07-28,2025-11-25")
for j in interop/run.sh:interop interop/client.sh:interop-client interop/auth.sh:interop-auth \
         interop/peers.sh:interop-peers interop-tasks/run.sh:interop-tasks interop-ext-tasks/run.sh:interop-ext-tasks \
         interop-apps/run.sh:interop-apps; do
  [ -x "test/${j%%:*}" ] && jobs+=("${j##*:} test/${j%%:*}")
done
# Node first, once (its install is atomic, but concurrent first installs
# would each download it).
test/node/install.sh > /dev/null || { results+=("FAIL node install"); failed=1; }
declare -A live=() # pid -> job index, of the peer jobs running
run_job() { # run_job INDEX: one peer job in the background
  local cmd=${jobs[$1]#* }
  ( s=$SECONDS; bash -c "$cmd" > "$logdir/job$1.log" 2>&1; echo $? > "$logdir/job$1.rc"
    echo $((SECONDS - s)) > "$logdir/job$1.secs" ) &
  live[$!]=$1
}
echo "=== peers (${#jobs[@]} jobs, ${MCPFN_PEER_JOBS:-2} at a time)"
peer_start=$SECONDS
for i in "${!jobs[@]}"; do
  while [ "${#live[@]}" -ge "${MCPFN_PEER_JOBS:-2}" ]; do
    wait -n -p done_pid "${!live[@]}"; unset "live[$done_pid]"
  done
  run_job "$i"
done
[ "${#live[@]}" -eq 0 ] || wait "${!live[@]}"
for i in "${!jobs[@]}"; do
  name=${jobs[$i]%% *}
  echo "=== $name"
  cat "$logdir/job$i.log"
  if [ "$(cat "$logdir/job$i.rc" 2>/dev/null)" = 0 ]; then results+=("PASS $name ($(cat "$logdir/job$i.secs")s)")
  else results+=("FAIL $name ($(cat "$logdir/job$i.secs" 2>/dev/null)s)"); failed=1; fi
done
results+=("peers stage: $((SECONDS - peer_start))s")

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
