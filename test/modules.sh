#!/usr/bin/env bash
# modules.sh prints the directory of every Go module of the repository, one
# a line, relative to the root: the use list of go.work, which
# test/policy's TestModuleLayout keeps equal to the go.mod files.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
go work edit -json go.work | sed -n 's/^[[:space:]]*"DiskPath": "\(.*\)".*/\1/p'
