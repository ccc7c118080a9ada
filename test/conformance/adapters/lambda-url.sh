#!/usr/bin/env bash
# lambda-url.sh WORKDIR: serve the fixture as an AWS Lambda function behind
# a Lambda Function URL with response streaming (invoke mode
# RESPONSE_STREAM), through lambdafront's streaming runtime: streamed
# responses reach the client as they are written.
# Several copies of the function share their sessions (DynamoDB, on
# dynalite) and signing key; see lambda.bash. Prints "serving MCP on URL";
# runs until killed.
set -euo pipefail
. "$(dirname "$0")/lambda.bash"
serve_lambda "$1" 1 -door url -mode streaming -runtime stream
