#!/usr/bin/env bash
# run.sh: drive examples/everything with the official TypeScript SDK client
# (@modelcontextprotocol/sdk, legacy era), on net/http and in buffered mode
# (where server-to-client requests travel by SSE polling). Installs the
# pinned SDK from the npm registry into ~/.cache on first use (Node 22 comes
# from test/node/install.sh).
set -euo pipefail
SDK_VERSION=1.32.2
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE=${MCPFN_TOOLS:-$HOME/.cache/mcpfn}/interop-$SDK_VERSION
node=$("$ROOT/test/node/install.sh")
"$ROOT/test/node/install.sh" "$CACHE" "@modelcontextprotocol/sdk@$SDK_VERSION" >/dev/null
work=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT
(cd "$ROOT" && go build -o "$work/everything" ./examples/everything)
cp "$HERE/client.mjs" "$CACHE/client.mjs"
for mode in streaming buffered; do
  flags=()
  [ "$mode" = buffered ] && flags=(-buffered)
  "$work/everything" "${flags[@]+"${flags[@]}"}" -addr 127.0.0.1:0 > "$work/out" 2> "$work/err" &
  pid=$!
  url=""
  for _ in $(seq 1 100); do
    url=$(sed -n 's/.*serving MCP on \(http[^ ]*\).*/\1/p' "$work/out"); [ -n "$url" ] && break; sleep 0.1
  done
  [ -n "$url" ] || { echo "interop: the fixture did not start" >&2; cat "$work/err" >&2; exit 1; }
  echo "interop: official TypeScript SDK $SDK_VERSION client against $url ($mode)"
  if ! "$node" "$CACHE/client.mjs" "$url"; then
    echo "interop: server log:" >&2; tail -n 30 "$work/err" >&2; exit 1
  fi
  kill $pid; wait $pid 2>/dev/null || true; pid=""
done
