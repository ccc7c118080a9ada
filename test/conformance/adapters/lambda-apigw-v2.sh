#!/usr/bin/env bash
# lambda-apigw-v2.sh WORKDIR: serve the fixture as an AWS Lambda function behind
# an API Gateway HTTP API (payload 2.0), buffered (HTTP APIs
# cannot stream), through the Lambda runtime interface emulator.
# Several copies of the function share their sessions (DynamoDB, on
# dynalite) and signing key; see lambda.bash. Prints "serving MCP on URL";
# runs until killed.
set -euo pipefail
. "$(dirname "$0")/lambda.bash"
serve_lambda "$1" 0 -door apigw-v2 -mode buffered -runtime rie
