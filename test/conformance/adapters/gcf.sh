#!/usr/bin/env bash
# gcf.sh WORKDIR: serve the fixture (WORKDIR/everything, built by run.sh)
# through the Functions Framework for Go's own local server, as Cloud
# Functions run it. Prints "serving MCP on URL"; runs until killed.
set -euo pipefail
exec "$1/everything" -platform gcf -addr 127.0.0.1:0
