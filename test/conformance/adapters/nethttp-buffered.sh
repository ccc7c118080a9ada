#!/usr/bin/env bash
# nethttp-buffered.sh WORKDIR: serve the fixture on net/http, delivering each
# response only when its handler returns (as Lambda without streaming, or an
# API Gateway HTTP API, does), with the server in buffered mode.
set -euo pipefail
exec "$1/everything" -buffered -addr 127.0.0.1:0
