#!/usr/bin/env bash
# start.sh starts dynalite, a DynamoDB-compatible server, for the tests of
# store/dynamo:
#
#   eval "$(test/dynalite/start.sh --detach)"   # start it in the background
#   go test -race ./store/dynamo/               # reads MCPFN_DYNAMODB_ENDPOINT
#   test/dynalite/stop.sh
#
#   test/dynalite/start.sh                      # or in the foreground, until killed
#   test/dynalite/with.sh go test -race ./store/dynamo/   # or around one command
#
# It installs the pinned dynalite with npm into
# ${MCPFN_TOOLS:-$HOME/.cache/mcpfn}/dynalite/VERSION on first use (a few
# seconds; nothing when it is there), starts it on a free 127.0.0.1 port and
# prints, once it accepts connections,
#
#   export MCPFN_DYNAMODB_ENDPOINT=http://127.0.0.1:PORT
#
# The same line goes to $STATE/env and the server's pid to $STATE/pid, where
# STATE is ${MCPFN_DYNALITE_STATE:-${TMPDIR:-/tmp}/mcpfn-dynalite-$UID}; stop.sh
# reads it. With --detach, a server already running for STATE is reused.
# Needs npm for the first install (Node itself comes from
# test/node/install.sh).
set -euo pipefail

DYNALITE_VERSION=4.0.0

HERE=$(cd "$(dirname "$0")" && pwd)
TOOLS=${MCPFN_TOOLS:-$HOME/.cache/mcpfn}
STATE=${MCPFN_DYNALITE_STATE:-${TMPDIR:-/tmp}/mcpfn-dynalite-$(id -u)}

die() { echo "start.sh: $*" >&2; exit 2; }

detach=0
while [ $# -gt 0 ]; do
  case "$1" in
    -d|--detach) detach=1; shift ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) die "unknown argument $1" ;;
  esac
done

# is_ours PID: the process is a dynalite started by this script.
is_ours() {
  kill -0 "$1" 2>/dev/null || return 1
  local args
  args=$(ps -o args= -p "$1" 2>/dev/null || tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null || true)
  case "$args" in *"$HERE/serve.js"*) return 0 ;; esac
  return 1
}

mkdir -p "$STATE"
if [ -f "$STATE/pid" ] && is_ours "$(cat "$STATE/pid")" && [ -s "$STATE/env" ]; then
  if [ "$detach" = 1 ]; then cat "$STATE/env"; exit 0; fi
  die "dynalite is already running (pid $(cat "$STATE/pid"), $(cat "$STATE/env")); stop it with stop.sh or set MCPFN_DYNALITE_STATE"
fi

# --- node and dynalite (test/node/install.sh) -----------------------------
node=$("$HERE/../node/install.sh") || die "installing Node failed"
mods=$("$HERE/../node/install.sh" "$TOOLS/dynalite/$DYNALITE_VERSION" "dynalite@$DYNALITE_VERSION") ||
  die "installing dynalite failed"
module="$mods/dynalite"

# --- start ------------------------------------------------------------------
rm -f "$STATE/pid" "$STATE/env" "$STATE/out"
if [ "$detach" = 1 ] && command -v setsid >/dev/null; then
  setsid "$node" "$HERE/serve.js" "$module" >"$STATE/out" 2>"$STATE/log" </dev/null &
else
  "$node" "$HERE/serve.js" "$module" >"$STATE/out" 2>"$STATE/log" </dev/null &
fi
pid=$!
echo "$pid" > "$STATE/pid"
if [ "$detach" = 0 ]; then
  trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -f "$STATE/pid" "$STATE/env" "$STATE/out"' EXIT
  trap 'exit 0' INT TERM
fi

line=""
for _ in $(seq 1 300); do
  line=$(grep -m1 '^export MCPFN_DYNAMODB_ENDPOINT=' "$STATE/out" 2>/dev/null || true)
  [ -n "$line" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$STATE/log" >&2; die "dynalite exited at start"; }
  sleep 0.1
done
[ -n "$line" ] || { kill "$pid" 2>/dev/null; cat "$STATE/log" >&2; die "dynalite did not start in 30 s"; }
echo "$line" > "$STATE/env.tmp" && mv "$STATE/env.tmp" "$STATE/env"
echo "$line"

if [ "$detach" = 0 ]; then
  wait "$pid"
fi
