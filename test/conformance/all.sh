#!/usr/bin/env bash
# all.sh: run both conformance revisions against every adapter; each adapter's
# fixture serves both revisions from one process. Exit non-zero if any run has
# an unexpected failure.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
adapters=${ADAPTERS:-nethttp nethttp-buffered gcf lambda-url lambda-apigw-v1 lambda-apigw-v2 lambda-url-buffered replicas workers workers-fresh}
status=0
for a in $adapters; do
  "$HERE/run.sh" --rev 2025-11-25,2026-07-28 --adapter "$a" || status=1
done
exit $status
