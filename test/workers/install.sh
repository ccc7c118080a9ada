#!/usr/bin/env bash
# install.sh: the pinned workerd (npm package workerd, the open-source
# Workers runtime) for the tests of the Workers adapter; prints the path of
# its binary. Installed once into ${MCPFN_TOOLS:-~/.cache/mcpfn} through
# test/node/install.sh (atomic, safe for concurrent callers).
#
#   workerd=$(test/workers/install.sh)
#   wrangler=$(test/workers/install.sh wrangler)   # npm wrangler, for `wrangler deploy --dry-run`
set -euo pipefail
WORKERD_VERSION=1.20261117.1
WRANGLER_VERSION=4.164.0
TOOLS=${MCPFN_TOOLS:-$HOME/.cache/mcpfn}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case "${1:-workerd}" in
  workerd)
    mods=$("$ROOT/test/node/install.sh" "$TOOLS/workerd-$WORKERD_VERSION" "workerd@$WORKERD_VERSION")
    echo "$mods/.bin/workerd" ;;
  wrangler)
    mods=$("$ROOT/test/node/install.sh" "$TOOLS/wrangler-$WRANGLER_VERSION" "wrangler@$WRANGLER_VERSION")
    echo "$mods/.bin/wrangler" ;;
  *) echo "install.sh: workerd or wrangler" >&2; exit 2 ;;
esac
