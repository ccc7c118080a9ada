#!/usr/bin/env bash
# peers.sh: package client against MCP servers that are not mcpfn, through
# the mcpfn command line (cmd/mcpfn) and the Go API (test/clientbench, the
# TestPeer* tests):
#
#   - peer-ts-v1.mjs, the official TypeScript SDK v1 (@modelcontextprotocol/sdk,
#     StreamableHTTPServerTransport with sessions): a session the server has
#     ended is answered 404 + JSON-RPC -32001; the client starts a new
#     session and sends the request once more (the tool runs once);
#   - peer-ts-v2.mjs, the TypeScript SDK v2 (@modelcontextprotocol/server),
#     and test/clientbench/cmd/gosdkpeer, go-sdk v1.8.0, both declaring
#     x-mcp-header: the first tools/call of a fresh client already carries
#     Mcp-Param-Region (Base64 for a non-ASCII value), and per-credential
#     private tool lists are never served to another credential; and the
#     CLI's text output (--human) of their tool lists and results;
#   - the stdio bridge (mcpfn stdio URL) under official TypeScript SDK hosts
#     (stdio-host.mjs: StdioClientTransport, SDK v1 and v2, each era) in
#     front of examples/everything and of the two TypeScript peers: a
#     call's progress and an elicitation cross it, relayed (2026-07-28),
#     kept in a 2025 session, or translated (a 2025 host, a 2026-07-28-only
#     server).
#
#   test/interop/peers.sh             run everything
#   test/interop/peers.sh --install   install Node and the packages; print
#                                     "node=PATH" and "dir=PACKAGE-DIR"
#
# Node and the pinned packages are installed on first use (test/node/install.sh)
# into ${MCPFN_TOOLS:-~/.cache/mcpfn}.
set -euo pipefail
SDK_VERSION=1.32.2    # @modelcontextprotocol/sdk (v1), as test/interop/run.sh
SERVER_VERSION=2.4.0  # @modelcontextprotocol/server (v2), as the client of test/interop/auth.sh
CLIENT_VERSION=2.4.0  # @modelcontextprotocol/client (v2), the stdio host
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$ROOT/test/interop/harness.bash"
DIR=${MCPFN_TOOLS:-$HOME/.cache/mcpfn}/interop-peers-$SDK_VERSION-$SERVER_VERSION-$CLIENT_VERSION
node_packages "${1:-}" "$DIR" "@modelcontextprotocol/sdk@$SDK_VERSION" \
  "@modelcontextprotocol/server@$SERVER_VERSION" "@modelcontextprotocol/client@$CLIENT_VERSION"

work=$(mktemp -d)
pids=()
scripts=()
cleanup() {
  for p in "${pids[@]+"${pids[@]}"}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  for s in "${scripts[@]+"${scripts[@]}"}"; do rm -f "$s"; done
  rm -rf "$work"
}
trap cleanup EXIT
(cd "$ROOT" && go build -o "$work/mcpfn" ./cmd/mcpfn)
(cd "$ROOT/test/clientbench" && go build -o "$work/gosdkpeer" ./cmd/gosdkpeer)

failed=0
fail() { echo "FAIL $*"; failed=1; }

# start NAME COMMAND...: starts a peer, waits for its "serving MCP on URL"
# line and sets url and base (the URL without /mcp).
start() {
  local name=$1; shift
  # The files exist before the peer starts: the wait below reads them at
  # once, and a background redirect may not have created them yet.
  : > "$work/$name.out"; : > "$work/$name.err"
  "$@" > "$work/$name.out" 2> "$work/$name.err" &
  pids+=($!)
  url=$(serving_url "$work/$name.out" "${pids[-1]}" 300)
  if [ -z "$url" ]; then
    echo "peers.sh: $name did not start:" >&2; tail -n 20 "$work/$name.err" >&2; exit 1
  fi
  base=${url%/mcp}
}

# node_peer FILE: runs test/interop/FILE with Node from inside DIR (whose
# node_modules it imports), as a copy of its own.
node_peer() {
  local copy
  copy=$(mktemp "$DIR/peer-XXXXXX.mjs")
  scripts+=("$copy")
  cp "$HERE/$1" "$copy"
  start "${1%.mjs}" "$node" "$copy"
}

# mcpfn NAME WANT-EXIT WANT-SUBSTRING ARGS...: runs the CLI.
mcpfn() {
  local name=$1 want=$2 sub=$3; shift 3
  local out rc=0
  out=$("$work/mcpfn" "$@" 2>"$work/stderr") || rc=$?
  if [ "$rc" != "$want" ]; then fail "$name: exit $rc, want $want: $(tail -n 3 "$work/stderr")"; return 1; fi
  case "$out" in *"$sub"*) ;; *) fail "$name: output lacks $sub: ${out:0:300}"; return 1 ;; esac
}

# field URL EXPRESSION: evaluates a JavaScript expression over the JSON at
# URL (bound to s). post URL: POSTs to a peer's admin hook.
field() {
  "$node" -e 'fetch(process.argv[1]).then(r=>r.json()).then(s=>console.log(eval(process.argv[2])))' "$1" "$2"
}
post() {
  "$node" -e 'fetch(process.argv[1],{method:"POST"}).then(r=>{if(!r.ok)process.exit(1)})' "$1"
}

# --- 8: TypeScript SDK v1, an ended session ----------------------------------
node_peer peer-ts-v1.mjs
ts_v1_url=$url
for mode in auto legacy; do
  post "$base/admin/expire-next"
  nf=$(field "$base/admin/stats" s.notFound)
  if mcpfn "ts-v1/$mode tools after the session ended" 0 '"count"' tools "$url" --mode "$mode"; then
    [ "$(field "$base/admin/stats" s.notFound)" = $((nf + 1)) ] || fail "ts-v1/$mode tools: the server answered no 404"
  fi
  post "$base/admin/expire-next"
  runs=$(field "$base/admin/stats" s.count)
  mcpfn "ts-v1/$mode call after the session ended" 0 '"type":"text"' call "$url" count --mode "$mode" || true
  got=$(field "$base/admin/stats" s.count)
  [ "$got" = $((runs + 1)) ] || fail "ts-v1/$mode call: the tool ran $((got - runs)) times, want once"
done
echo "peers: ts-v1 done"

# --- 9 and 10: TypeScript SDK v2 and go-sdk ------------------------------------
check_headers_and_cache() { # NAME STATS-URL
  local name=$1 stats=$2 n
  n=$(field "$stats" s.calls.length)
  mcpfn "$name call before a list" 0 'region=Zürich level=2' call "$url" where '{"region":"Zürich","level":2}' --token alice || true
  [ "$(field "$stats" s.calls.length)" = $((n + 1)) ] || fail "$name: $(( $(field "$stats" s.calls.length) - n )) tools/call sent, want 1 (no -32020 round)"
  [ "$(field "$stats" 's.calls[s.calls.length-1]["Mcp-Param-Region"]')" = '=?base64?WsO8cmljaA==?=' ] || fail "$name: Mcp-Param-Region $(field "$stats" 'JSON.stringify(s.calls[s.calls.length-1])')"
  [ "$(field "$stats" 's.calls[s.calls.length-1]["Mcp-Param-Level"]')" = 2 ] || fail "$name: Mcp-Param-Level"
  mcpfn "$name plain value" 0 'region=eu-west-1' call "$url" where '{"region":"eu-west-1"}' --token bob || true
  [ "$(field "$stats" 's.calls[s.calls.length-1]["Mcp-Param-Region"]')" = eu-west-1 ] || fail "$name: Mcp-Param-Region eu-west-1"
  mcpfn "$name tools for bob" 0 '"bob_tool"' tools "$url" --token bob || true
  mcpfn "$name tools for alice" 0 '"alice_tool"' tools "$url" --header 'authorization: Bearer alice' || true
  if "$work/mcpfn" tools "$url" --token bob 2>/dev/null | grep -q alice_tool; then fail "$name: bob got alice_tool"; fi
}
# human NAME: the CLI's text output for people (--human: as on a terminal)
# from a peer that is not mcpfn: the tools table, a call's text as it is.
human() {
  local name=$1 out
  out=$("$work/mcpfn" tools "$url" --token bob --human 2>"$work/stderr") || { fail "$name tools --human: $(tail -n 3 "$work/stderr")"; return; }
  case "$out" in "TOOL "*$'\n'"where "*) ;; *) fail "$name tools --human: ${out:0:300}" ;; esac
  out=$("$work/mcpfn" call "$url" where '{"region":"eu-west-1","level":3}' --token bob --human 2>"$work/stderr") || { fail "$name call --human: $(tail -n 3 "$work/stderr")"; return; }
  [ "$out" = "region=eu-west-1 level=3" ] || fail "$name call --human: ${out:0:300}"
}
node_peer peer-ts-v2.mjs
ts_v2_url=$url
check_headers_and_cache ts-v2 "$base/admin/stats"
human ts-v2
echo "peers: ts-v2 done"
start gosdk "$work/gosdkpeer"
check_headers_and_cache go-sdk "$base/stats"
human go-sdk
echo "peers: go-sdk done"

# --- the stdio bridge under TypeScript SDK hosts ------------------------------
# stdio_host HOST URL PROGRESS-TOOL ASK-TOOL ASK-ARGS WANT: stdio-host.mjs
# (its own copy inside DIR) spawns `mcpfn stdio URL` with StdioClientTransport.
stdio_start=$SECONDS
(cd "$ROOT" && go build -o "$work/everything" ./examples/everything)
host_copy=$(mktemp "$DIR/stdio-host-XXXXXX.mjs")
scripts+=("$host_copy")
cp "$HERE/stdio-host.mjs" "$host_copy"
stdio_host() {
  local h=$1 u=$2; shift 2
  "$node" "$host_copy" "$h" "$work/mcpfn" "$u" "$@" > "$work/stdio.out" 2>&1 ||
    fail "stdio $h $u: $(tail -n 15 "$work/stdio.out")"
}
start everything "$work/everything" -addr 127.0.0.1:0
ev_url=$url
ev=(test_tool_with_progress test_elicitation '{"message":"who?"}' 'action=accept')
peer=(progress ask '{}' 'accept:Ada')
# everything, dual-era: a 2025 session for a 2025 host, 2026-07-28 relayed.
stdio_host v1 "$ev_url" "${ev[@]}"
stdio_host v2-modern "$ev_url" "${ev[@]}" 2026-07-28
# TypeScript SDK v2 peer (2026-07-28 only): relayed, and translated for a
# 2025 host (its input_required answered by asking the host).
stdio_host v2-modern "$ts_v2_url" "${peer[@]}"
stdio_host v1 "$ts_v2_url" "${peer[@]}"
# TypeScript SDK v1 peer (2025 only, its elicitation on the GET stream): a
# v2 host probing with server/discover falls back to initialize.
stdio_host v2-auto "$ts_v1_url" "${peer[@]}" 2025-11-25
echo "peers: stdio done ($((SECONDS - stdio_start))s)"

# --- the Go API against the same peers ----------------------------------------
(cd "$ROOT/test/clientbench" && MCPFN_REQUIRE_NODE=1 go test -race -count=1 -run '^TestPeer' .) || fail "go test -run TestPeer ./test/clientbench"

[ "$failed" = 0 ] && echo "peers: all passed"
exit $failed
