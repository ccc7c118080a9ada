#!/usr/bin/env bash
# lambda-url-buffered.sh WORKDIR: serve the fixture as an AWS Lambda function behind
# a Lambda Function URL with invoke mode BUFFERED, through
# the Lambda runtime interface emulator.
# Several copies of the function share their sessions (DynamoDB, on
# dynalite) and signing key; see lambda.bash. Prints "serving MCP on URL";
# runs until killed.
set -euo pipefail
. "$(dirname "$0")/lambda.bash"
serve_lambda "$1" 0 -door url -mode buffered -runtime rie
