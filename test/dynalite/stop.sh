#!/usr/bin/env bash
# stop.sh stops the dynalite that start.sh started for the same state
# directory (${MCPFN_DYNALITE_STATE:-${TMPDIR:-/tmp}/mcpfn-dynalite-$UID}).
# It only signals that one process, and only when its command line is
# start.sh's; it succeeds when nothing is running.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
STATE=${MCPFN_DYNALITE_STATE:-${TMPDIR:-/tmp}/mcpfn-dynalite-$(id -u)}

[ -f "$STATE/pid" ] || exit 0
pid=$(cat "$STATE/pid")
args=$(ps -o args= -p "$pid" 2>/dev/null || tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null || true)
case "$args" in
  *"$HERE/serve.js"*)
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
    ;;
esac
rm -f "$STATE/pid" "$STATE/env" "$STATE/out" "$STATE/log"
rmdir "$STATE" 2>/dev/null || true
