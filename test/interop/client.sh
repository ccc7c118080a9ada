#!/usr/bin/env bash
# client.sh: package client, through the mcpfn command line (cmd/mcpfn),
# against examples/everything behind each platform adapter of
# test/conformance/adapters (and plain net/http), in each client mode
# (auto, modern, legacy): discover, tools, a plain call, a tool error
# (exit 1), and calls that need the user's input (answered with --answer:
# MRTR in 2026-07-28, server requests in legacy sessions).
#
#   test/interop/client.sh [ADAPTER...]     # default: nethttp and every adapter script
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$ROOT/test/interop/harness.bash"
ADAPTERS="$ROOT/test/conformance/adapters"
work=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
(cd "$ROOT" && go build -o "$work/everything" ./examples/everything && go build -o "$work/mcpfn" ./cmd/mcpfn)

if [ $# -gt 0 ]; then adapters=("$@"); else
  adapters=(nethttp)
  for f in "$ADAPTERS"/*.sh; do adapters+=("$(basename "$f" .sh)"); done
fi

failed=0
fail() { echo "FAIL $*"; failed=1; }

# check NAME WANT-EXIT WANT-SUBSTRING mcpfn-args...
check() {
  local name=$1 want=$2 sub=$3; shift 3
  local out rc=0
  out=$("$work/mcpfn" "$@" 2>"$work/stderr") || rc=$?
  if [ "$rc" != "$want" ]; then fail "$name: exit $rc, want $want: $(tail -n 3 "$work/stderr")"; return; fi
  case "$out" in *"$sub"*) ;; *) fail "$name: output lacks $sub: ${out:0:300}" ;; esac
}

# start ADAPTER: starts examples/everything behind ADAPTER, sets pid and url,
# and waits until the server answers (the Functions Framework prints its line
# before it listens; a Lambda pool may still be starting its functions).
# Returns non-zero, with the server's stderr shown, when it never answers.
# (A run once read a URL from an earlier Lambda run's log left in a shared
# work directory: hence a directory per start.)
start() {
  local a=$1
  : > "$work/server.out"
  if [ "$a" = nethttp ]; then
    "$work/everything" -addr 127.0.0.1:0 > "$work/server.out" 2> "$work/server.err" &
  else
    # Each start gets a work directory of its own: nothing an earlier
    # server left there can be mistaken for this one's.
    local dir
    dir=$(mktemp -d "$work/$a.XXXXXX")
    ln -s "$work/everything" "$dir/everything" # the fixture the scripts serve
    "$ADAPTERS/$a.sh" "$dir" > "$work/server.out" 2> "$work/server.err" &
  fi
  pid=$!
  url=$(serving_url "$work/server.out" "$pid" 1200)
  if [ -n "$url" ]; then
    for _ in $(seq 1 600); do
      "$work/mcpfn" tools "$url" >/dev/null 2>&1 && return 0
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  fi
  echo "$a: the server did not answer${url:+ at $url}; its last lines:" >&2
  tail -n 20 "$work/server.err" >&2
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
  return 1
}

for a in "${adapters[@]}"; do
  start "$a" || { fail "$a: the server did not start"; continue; }
  before=$failed
  for mode in auto modern legacy; do
    m=(--mode "$mode")
    want='"supportedVersions"'; [ "$mode" = legacy ] && want='"protocolVersion"'
    check "$a/$mode discover" 0 "$want" discover "$url" "${m[@]}"
    check "$a/$mode tools" 0 '"test_simple_text"' "${m[@]}" tools "$url"
    check "$a/$mode call" 0 'This is a simple text response' call "$url" test_simple_text '{}' "${m[@]}"
    check "$a/$mode isError" 1 '"isError":true' call "$url" test_error_handling '{}' "${m[@]}"
    check "$a/$mode elicitation" 0 'action=accept' call "$url" test_elicitation '{"message":"who?"}' "${m[@]}" \
      --answer '{"username":"ada","email":"ada@example.com"}'
    check "$a/$mode two rounds" 0 'Hello Ada, your favorite color is blue.' call "$url" test_input_required_result_multi_round '{}' "${m[@]}" \
      --answer '{"name":"Ada"}' --answer '{"color":"blue"}'
    check "$a/$mode x-mcp-header" 0 'region=Zürich level=2' call "$url" test_x_mcp_header '{"region":"Zürich","level":2}' "${m[@]}"
  done
  [ "$failed" = "$before" ] && echo "PASS $a (auto, modern, legacy)"
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
done
exit $failed
