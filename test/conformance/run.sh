#!/usr/bin/env bash
# run.sh: run the official MCP conformance suite (server scenarios) against the
# examples/everything fixture behind one platform adapter, and print as the
# last line:  conformance-<revision>: N passed, M failed
#
#   test/conformance/run.sh --rev 2026-07-28 [--adapter nethttp] [--scenario NAME] [--url URL]
#   test/conformance/run.sh --rev 2025-11-25,2026-07-28   # both, one after the other, same process
#   test/conformance/run.sh --leg client --rev 2026-07-28  # the client scenarios against
#                                                          # test/conformance/client (package client)
#
# It builds and starts the fixture on a free loopback port (unless --url points
# at a running server), runs the pinned suite, stops the fixture and scores the
# run against test/conformance/expected/<adapter>-<rev>.yaml (scenarios allowed
# to fail, each with its reason). Exit 0 when every failure is expected.
#
# Needs Go, bash and npm (first run only): Node 22 comes from
# test/node/install.sh, the suite goes into ${MCP_CONFORMANCE_HOME:-~/.cache/mcp-conformance}.
set -euo pipefail

SUITE_VERSION=0.2.0-alpha.12
CACHE=${MCP_CONFORMANCE_HOME:-$HOME/.cache/mcp-conformance}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

die() { echo "run.sh: $*" >&2; exit 2; }

rev="" adapter=nethttp scenario="" url="" leg=server extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rev|--requirements) rev=${2:-}; shift 2 ;;
    --adapter) adapter=${2:-}; shift 2 ;;
    --scenario) scenario=${2:-}; shift 2 ;;
    --url) url=${2:-}; shift 2 ;;
    --leg) leg=${2:-}; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) extra+=("$1"); shift ;;
  esac
done
[[ "$rev" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}(,[0-9]{4}-[0-9]{2}-[0-9]{2})*$ ]] || die "--rev REVISION[,REVISION] is required (2026-07-28, 2025-11-25)"
revs=(${rev//,/ })
[ "$leg" = server ] || [ "$leg" = client ] || die "--leg is server or client"

# --- install the pinned Node and suite (idempotent, test/node/install.sh) ----
node=$("$ROOT/test/node/install.sh") || die "installing Node failed"
mods=$("$ROOT/test/node/install.sh" "$CACHE/suite-$SUITE_VERSION" "@modelcontextprotocol/conformance@$SUITE_VERSION") ||
  die "installing the suite failed"
cli="$mods/@modelcontextprotocol/conformance/dist/index.js"
for r in "${revs[@]}"; do
  [ -f "$mods/@modelcontextprotocol/conformance/requirements/$r.yaml" ] || die "the suite has no requirement set $r"
done

# --- start the fixture ----------------------------------------------------------
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]+"${pids[@]}"}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]+"${pids[@]}"}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# wait_url FILE: wait for the "serving MCP on URL" line a server prints.
wait_url() {
  for _ in $(seq 1 600); do
    u=$(sed -n 's/.*serving MCP on \(http[^ ]*\).*/\1/p' "$1" | head -n1)
    if [ -n "$u" ]; then echo "$u"; return 0; fi
    sleep 0.1
  done
  echo "run.sh: the server did not start; its output:" >&2; cat "$1" >&2; return 1
}

# --- client leg: the suite's scenario servers against test/conformance/client ----
if [ "$leg" = client ]; then
  (cd "$ROOT" && go build -o "$work/conformance-client" ./test/conformance/client)
  status=0
  for rev in "${revs[@]}"; do
    out="$CACHE/results/client-$rev-$(date -u +%Y%m%dT%H%M%SZ)-$$"
    mkdir -p "$out"
    if [ -n "$scenario" ]; then
      # --force: extension scenarios (auth/dpop, ...) are on no spec
      # timeline, so the suite skips them under --spec-version without it.
      select=(--scenario "$scenario" --spec-version "$rev" --force)
    else
      select=(--requirements "$rev")
    fi
    echo "run.sh: suite $SUITE_VERSION client scenarios against test/conformance/client, revision $rev; log: $out/suite.log"
    set +e
    "$node" "$cli" client --command "$work/conformance-client" "${select[@]}" -o "$out" ${extra[@]+"${extra[@]}"} > "$out/suite.log" 2>&1
    "$node" "$HERE/score.js" "$mods" "$out" "$rev" "$scenario" "$HERE/expected/client-$rev.yaml" client
    rc=$?
    set -e
    [ "$rc" = 0 ] || status=$rc
  done
  exit $status
fi

if [ -z "$url" ]; then
  (cd "$ROOT" && go build -o "$work/everything" ./examples/everything)
  case "$adapter" in
    nethttp)
      "$work/everything" -addr 127.0.0.1:0 > "$work/server.out" 2> "$work/server.err" &
      pids+=($!)
      url=$(wait_url "$work/server.out")
      ;;
    *)
      if [ -x "$HERE/adapters/$adapter.sh" ]; then
        # An adapter script starts the fixture behind its platform and prints
        # "serving MCP on URL"; it runs until killed.
        "$HERE/adapters/$adapter.sh" "$work" > "$work/server.out" 2> "$work/server.err" &
        pids+=($!)
        url=$(wait_url "$work/server.out")
      else
        die "unknown adapter $adapter"
      fi
      ;;
  esac
fi

# --- run the suite, once per revision, against the same server ---------------------
status=0
for rev in "${revs[@]}"; do
  out="$CACHE/results/$adapter-$rev-$(date -u +%Y%m%dT%H%M%SZ)-$$"
  mkdir -p "$out"
  if [ -n "$scenario" ]; then
    select=(--scenario "$scenario" --spec-version "$rev" --force)
  else
    select=(--requirements "$rev")
  fi
  echo "run.sh: suite $SUITE_VERSION against $url ($adapter), revision $rev; log: $out/suite.log"
  set +e
  "$node" "$cli" server --url "$url" "${select[@]}" -o "$out" ${extra[@]+"${extra[@]}"} > "$out/suite.log" 2>&1
  set -e
  if ! ls "$out"/server-*/checks.json >/dev/null 2>&1; then
    echo "run.sh: the suite wrote no results; end of its log:" >&2; tail -n 20 "$out/suite.log" >&2
  fi
  cp "$work/server.err" "$out/server.err" 2>/dev/null || true
  set +e
  "$node" "$HERE/score.js" "$mods" "$out" "$rev" "$scenario" "$HERE/expected/$adapter-$rev.yaml"
  rc=$?
  set -e
  [ "$rc" = 0 ] || status=$rc
done
exit $status
