#!/usr/bin/env bash
# unit.sh: `go test -race` over every package of every module of go.work
# (the pattern "work"), with the local emulators the tests use: dynalite
# (DynamoDB), the AWS Lambda runtime interface emulator and workerd, and with
# zsh and fish for the completion scripts' tests. Tests that need them are
# required here (MCPFN_REQUIRE_*=1), so a missing emulator or shell fails
# instead of skipping.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
MCPFN_RIE=$(test/lambdafront/install-rie.sh)
export MCPFN_RIE MCPFN_REQUIRE_RIE=1 MCPFN_REQUIRE_DYNAMO=1 MCPFN_REQUIRE_WORKERD=1
shells=$(test/shells/install.sh)
MCPFN_ZSH=$(echo "$shells" | sed -n 's/^zsh=//p')
MCPFN_FISH=$(echo "$shells" | sed -n 's/^fish=//p')
export MCPFN_ZSH MCPFN_FISH MCPFN_REQUIRE_SHELLS=1
exec test/dynalite/with.sh go test -race -count=1 work
