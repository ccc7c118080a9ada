#!/usr/bin/env bash
# run.sh: package client's Tasks extension support (io.modelcontextprotocol/tasks,
# SEP-2663) against a tasks server mcpfn did not write: peer-tasks.mjs, the
# official TypeScript SDK v2 server with the extension's wire schemas
# (@modelcontextprotocol/ext-tasks/core/v2), driven by the Go test
# TestPeerTasks* of this directory, and the CLI's task status lines.
#
#   test/interop-tasks/run.sh             run the tests
#   test/interop-tasks/run.sh --install   install Node and the packages; print
#                                         "node=PATH" and "dir=PACKAGE-DIR"
#
# Node and the pinned packages are installed on first use (test/node/install.sh)
# into ${MCPFN_TOOLS:-~/.cache/mcpfn}.
set -euo pipefail
SERVER_VERSION=2.4.0 # @modelcontextprotocol/server (v2), as test/interop/peers.sh
TASKS_VERSION=0.2.2  # @modelcontextprotocol/ext-tasks
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$ROOT/test/interop/harness.bash"
DIR=${MCPFN_TOOLS:-$HOME/.cache/mcpfn}/interop-tasks-$SERVER_VERSION-$TASKS_VERSION
node_packages "${1:-}" "$DIR" "@modelcontextprotocol/server@$SERVER_VERSION" \
  "@modelcontextprotocol/ext-tasks@$TASKS_VERSION" "zod@4.6.7"
failed=0
(cd "$ROOT/test" && MCPFN_REQUIRE_NODE=1 go test -race -count=1 ./interop-tasks/) || failed=1

# The CLI against the same peer: the task's result on stdout, its status
# changes on stderr.
work=$(mktemp -d)
peer=$(mktemp "$DIR/peer-XXXXXX.mjs")
pid=""
cleanup() { [ -n "$pid" ] && { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }; rm -rf "$work" "$peer"; }
trap cleanup EXIT
(cd "$ROOT" && go build -o "$work/mcpfn" ./cmd/mcpfn)
cp "$HERE/peer-tasks.mjs" "$peer"
: > "$work/peer.out"
"$node" "$peer" > "$work/peer.out" 2> "$work/peer.err" &
pid=$!
url=$(serving_url "$work/peer.out" "$pid" 300)
if [ -z "$url" ]; then echo "run.sh: peer-tasks.mjs did not start:" >&2; tail -n 20 "$work/peer.err" >&2; exit 1; fi
out=$("$work/mcpfn" call "$url" greet --answer '{"name":"Luca"}' 2>"$work/stderr") || { echo "FAIL cli: $(tail -n 3 "$work/stderr")"; failed=1; }
case "$out" in *'"Hello, Luca!"'*) ;; *) echo "FAIL cli: stdout ${out:0:300}"; failed=1 ;; esac
for want in ': working' ': input_required: waiting for a name' ': completed: greeted'; do
  grep -q "^mcpfn: task [0-9a-f-]*$want\$" "$work/stderr" || { echo "FAIL cli: stderr lacks '$want': $(cat "$work/stderr")"; failed=1; }
done
[ "$failed" = 0 ] && echo "interop-tasks: all passed"
exit $failed
