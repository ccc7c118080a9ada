#!/usr/bin/env bash
# lambda-apigw-v1.sh WORKDIR: serve the fixture as an AWS Lambda function behind
# an API Gateway REST API (Lambda proxy integration, payload
# 1.0) with response streaming, through lambdafront's streaming runtime.
# Several copies of the function share their sessions (DynamoDB, on
# dynalite) and signing key; see lambda.bash. Prints "serving MCP on URL";
# runs until killed.
set -euo pipefail
. "$(dirname "$0")/lambda.bash"
serve_lambda "$1" 1 -door apigw-v1 -mode streaming -runtime stream
