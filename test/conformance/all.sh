#!/usr/bin/env bash
# all.sh: run both conformance revisions against every adapter; each adapter's
# fixture serves both revisions from one process. Exit non-zero if any run has
# an unexpected failure.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# Every adapter, the longest runs first (test/all.sh runs them a few at a
# time in this order); `all.sh --list` prints them.
adapters=${ADAPTERS:-replicas lambda-url lambda-url-buffered lambda-apigw-v1 lambda-apigw-v2 workers workers-fresh nethttp nethttp-buffered gcf}
if [ "${1:-}" = --list ]; then echo $adapters; exit 0; fi
status=0
for a in $adapters; do
  "$HERE/run.sh" --rev 2025-11-25,2026-07-28 --adapter "$a" || status=1
done
exit $status
