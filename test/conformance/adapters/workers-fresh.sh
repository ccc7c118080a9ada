#!/usr/bin/env bash
# workers-fresh.sh WORKDIR: workers.sh with a fresh Go instance for every
# request (MCPFN_GO_INSTANCE=request): whatever a scenario needs across
# requests (sessions, tasks, keys) must live in Durable Objects or secrets.
set -euo pipefail
MCPFN_GO_INSTANCE=request exec "$(dirname "$0")/workers.sh" "$@"
