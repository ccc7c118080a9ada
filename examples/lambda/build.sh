#!/bin/sh
# build.sh builds the calculator Lambda function (examples/lambda) into
# deployment packages for the provided.al2023 runtime, one zip per
# architecture, each holding the `bootstrap` executable, and prints their
# paths:
#
#   examples/lambda/build.sh [ARCH...]    # ARCH: arm64, amd64 (default: both)
#
# It writes ${OUT:-examples/lambda/build}/lambda-ARCH.zip, which
# infra/terraform/modules/mcp-lambda deploys (arm64 is Lambda's Graviton,
# x86_64 is amd64). Needs Go only: the zips are written by
# `mcpfn package lambda` (cmd/mcpfn, built from this checkout), the command a
# user runs on their own function.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${OUT:-$here/build}
[ $# -gt 0 ] || set -- arm64 amd64
for arch in "$@"; do
  case "$arch" in
    arm64|amd64) ;;
    *) echo "build.sh: unknown architecture $arch (want arm64 or amd64)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -C "$root" -o "$tmp/mcpfn" ./cmd/mcpfn
for arch in "$@"; do
  (cd "$here" && "$tmp/mcpfn" package lambda --timeout 0 -arch "$arch" -o "$out/lambda-$arch.zip" . >/dev/null)
  echo "$out/lambda-$arch.zip"
done
