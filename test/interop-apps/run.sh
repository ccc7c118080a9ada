#!/usr/bin/env bash
# run.sh: MCP Apps (SEP-1865, io.modelcontextprotocol/ui) against peers mcpfn
# did not write. apps_test.go registers one app twice, with
# @modelcontextprotocol/ext-apps' server helpers on the official TypeScript
# SDK v2 server (peer-apps.mjs) and with package ext/apps on mcpfn, compares
# their tools/list, resources/list and resources/read (and the extension in
# server/discover / initialize) with each other and with the goldens in
# testdata/, in 2026-07-28 and 2025-11-25; then host-check.mjs, a host built
# from the official TypeScript SDK v2 client and ext-apps' host-side
# helpers and schemas (app-bridge), accepts mcpfn's app in both eras.
#
#   test/interop-apps/run.sh             run the tests
#   test/interop-apps/run.sh --install   install Node and the packages; print
#                                        "node=PATH" and "dir=PACKAGE-DIR"
#
# Node and the pinned packages are installed on first use (test/node/install.sh)
# into ${MCPFN_TOOLS:-~/.cache/mcpfn}.
set -euo pipefail
SDK_VERSION=2.4.0     # @modelcontextprotocol/server, client, core (v2), as test/interop-tasks
EXT_APPS_VERSION=2.0.4 # @modelcontextprotocol/ext-apps (its peers: the v2 packages, zod 4)
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$ROOT/test/interop/harness.bash"
DIR=${MCPFN_TOOLS:-$HOME/.cache/mcpfn}/interop-apps-$SDK_VERSION-$EXT_APPS_VERSION
node_packages "${1:-}" "$DIR" "@modelcontextprotocol/server@$SDK_VERSION" "@modelcontextprotocol/client@$SDK_VERSION" \
  "@modelcontextprotocol/core@$SDK_VERSION" "@modelcontextprotocol/ext-apps@$EXT_APPS_VERSION" "zod@4.6.7"
cd "$ROOT/test" && MCPFN_REQUIRE_NODE=1 go test -race -count=1 ./interop-apps/ && echo "interop-apps: all passed"
