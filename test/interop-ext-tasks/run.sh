#!/usr/bin/env bash
# run.sh: the official requester of the Tasks extension
# (@modelcontextprotocol/ext-tasks, client side, plugged into the official
# TypeScript SDK v2 client @modelcontextprotocol/client on 2026-07-28) drives
# the task tools of examples/everything (requester.mjs): one input round to
# completion, the CreateTaskResult shape, polling at pollIntervalMs, a
# cancellation, a tool error. On net/http, streaming and buffered. The
# server's own request log must count the same task requests the requester
# sent. Prints PASS/FAIL lines and exits non-zero on any failure.
#
#   test/interop-ext-tasks/run.sh             run it
#   test/interop-ext-tasks/run.sh --install   install Node and the packages; print
#                                             "node=PATH" and "dir=PACKAGE-DIR"
#
# Node and the pinned packages are installed on first use (test/node/install.sh)
# into ${MCPFN_TOOLS:-~/.cache/mcpfn}.
set -euo pipefail
CLIENT_VERSION=2.4.0 # @modelcontextprotocol/client (v2), as test/interop/auth.sh
TASKS_VERSION=0.2.2  # @modelcontextprotocol/ext-tasks
ZOD_VERSION=4.6.7    # ext-tasks' one dependency, pinned as in test/interop-tasks
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$ROOT/test/interop/harness.bash"
DIR=${MCPFN_TOOLS:-$HOME/.cache/mcpfn}/interop-ext-tasks-$CLIENT_VERSION-$TASKS_VERSION
node_packages "${1:-}" "$DIR" "@modelcontextprotocol/client@$CLIENT_VERSION" \
  "@modelcontextprotocol/ext-tasks@$TASKS_VERSION" "zod@$ZOD_VERSION"

work=$(mktemp -d)
# The script runs from the package directory so that its imports resolve
# there; a unique name lets concurrent runs share the directory.
script=$(mktemp "$DIR/requester-XXXXXX.mjs")
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work" "$script"
}
trap cleanup EXIT
(cd "$ROOT" && go build -o "$work/everything" ./examples/everything)
cp "$HERE/requester.mjs" "$script"

# The fixture's suggested pollIntervalMs: above the package's own 1000 ms
# fallback for a task without one, so that honouring the hint shows.
POLL=1200ms
failed=0
fail() { echo "FAIL $*"; failed=1; }

# served METHOD: how many requests of METHOD the fixture has logged.
served() { grep -c "msg=\"mcp request\" method=$1 " "$work/err" || true; }

for mode in streaming buffered; do
  flags=()
  [ "$mode" = buffered ] && flags=(-buffered)
  : > "$work/out"; : > "$work/err"
  "$work/everything" "${flags[@]+"${flags[@]}"}" -task-poll "$POLL" -addr 127.0.0.1:0 > "$work/out" 2> "$work/err" &
  pid=$!
  url=$(serving_url "$work/out" "$pid" 100)
  if [ -z "$url" ]; then
    fail "$mode: the fixture did not start: $(tail -n 5 "$work/err")"
    break
  fi
  echo "interop-ext-tasks: @modelcontextprotocol/ext-tasks $TASKS_VERSION + @modelcontextprotocol/client $CLIENT_VERSION against $url ($mode)"
  rc=0
  timeout 90 "$node" "$script" "$url" > "$work/requester.out" 2> "$work/requester.err" || rc=$?
  sed "s/^\(PASS\|FAIL\) /\1 $mode: /" "$work/requester.out" | grep -v '^COUNT '
  if [ "$rc" != 0 ]; then
    failed=1
    grep -q '^FAIL ' "$work/requester.out" || echo "FAIL $mode: requester exited $rc: $(tail -n 20 "$work/requester.err")"
    echo "interop-ext-tasks: server log ($mode):" >&2; tail -n 30 "$work/err" >&2
  fi
  # What the requester sent must be what the server logged: its count of
  # tasks/get is the wire's, not the package's idea of it. The server logs
  # a request once it has answered, so its last line may trail the
  # requester's exit: wait for it, with a bound.
  counts=$(sed -n 's/^COUNT //p' "$work/requester.out")
  if [ -z "$counts" ]; then
    fail "$mode: server-count: the requester printed no COUNT line"
  else
    mismatch=""
    for _ in $(seq 1 50); do
      mismatch=""
      for kv in $counts; do
        m=${kv%=*} want=${kv#*=}
        got=$(served "$m")
        [ "$got" = "$want" ] || mismatch="$mismatch $m: server logged $got, requester sent $want;"
      done
      [ -z "$mismatch" ] && break
      sleep 0.1
    done
    if [ -n "$mismatch" ]; then fail "$mode: server-count:$mismatch"; else echo "PASS $mode: server-count: the server logged $counts"; fi
  fi
  kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=""
done

[ "$failed" = 0 ] && echo "interop-ext-tasks: all passed"
exit $failed
