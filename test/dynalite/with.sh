#!/usr/bin/env bash
# with.sh runs one command with a private dynalite running and
# MCPFN_DYNAMODB_ENDPOINT set, then stops it, and exits with the command's
# status:
#
#   test/dynalite/with.sh env MCPFN_REQUIRE_DYNAMO=1 go test -race ./store/dynamo/
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -gt 0 ] || { echo "usage: with.sh COMMAND [ARG...]" >&2; exit 2; }

MCPFN_DYNALITE_STATE=$(mktemp -d "${TMPDIR:-/tmp}/mcpfn-dynalite.XXXXXX")
export MCPFN_DYNALITE_STATE
trap '"$HERE/stop.sh"; rm -rf "$MCPFN_DYNALITE_STATE"' EXIT
eval "$("$HERE/start.sh" --detach)"
export MCPFN_DYNAMODB_ENDPOINT
"$@"
