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
DIR=${MCPFN_TOOLS:-$HOME/.cache/mcpfn}/interop-tasks-$SERVER_VERSION-$TASKS_VERSION
node=$("$ROOT/test/node/install.sh")
"$ROOT/test/node/install.sh" "$DIR" "@modelcontextprotocol/server@$SERVER_VERSION" \
  "@modelcontextprotocol/ext-tasks@$TASKS_VERSION" "zod@4.6.7" >/dev/null
if [ "${1:-}" = --install ]; then
  echo "node=$node"
  echo "dir=$DIR"
  exit 0
fi
cd "$ROOT/test" && MCPFN_REQUIRE_NODE=1 go test -race -count=1 ./interop-tasks/
