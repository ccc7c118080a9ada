#!/usr/bin/env bash
# replicas.sh WORKDIR: serve the fixture (WORKDIR/everything, built by
# run.sh) as three interchangeable replicas behind a round-robin proxy, as a
# serverless platform routes requests: consecutive requests of a client reach
# different processes, which share their legacy sessions through DynamoDB
# (dynalite) and their requestState keys through Secrets Manager (smfake).
# While the suite runs, replicas are restarted one by one (drain, SIGTERM,
# start anew) and the signing key is rotated once; see test/replicas.
# Prints "serving MCP on URL"; runs until killed.
#
# The suites take seconds, so the chaos is compressed to fall inside them:
# a restart every ${REPLICAS_RESTART_EVERY:-6s} from ${REPLICAS_FIRST_RESTART:-1s},
# the key promoted to AWSCURRENT at ${REPLICAS_ROTATE_AT:-2s}. The tasks of the
# Tasks extension live in the same table (store/dynamo's TaskStore); a replica
# being restarted lets the tasks it runs finish for ${REPLICAS_TASK_GRACE:-8s}
# (then they end failed, or cancelled when the client asked for it).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
(cd "$root" && go build -o "$1/replicas" ./test/replicas)
exec "$1/replicas" -work "$1" -everything "$1/everything" \
  -restart-every "${REPLICAS_RESTART_EVERY:-6s}" -first-restart "${REPLICAS_FIRST_RESTART:-1s}" \
  -rotation "${REPLICAS_ROTATION:-one-step}" -rotate-at "${REPLICAS_ROTATE_AT:-2s}" \
  -task-grace "${REPLICAS_TASK_GRACE:-8s}" -log "${REPLICAS_LOG_LEVEL:-info}"
