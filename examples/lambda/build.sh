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
# x86_64 is amd64). Needs Go only: the zip is written by a Go program.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/build}
[ $# -gt 0 ] || set -- arm64 amd64
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for arch in "$@"; do
  case "$arch" in
    arm64|amd64) ;;
    *) echo "build.sh: unknown architecture $arch (want arm64 or amd64)" >&2; exit 2 ;;
  esac
  mkdir -p "$tmp/$arch"
  GOOS=linux GOARCH=$arch CGO_ENABLED=0 go build -C "$here" -tags lambda.norpc -trimpath -ldflags='-s -w' \
    -o "$tmp/$arch/bootstrap" .
  go run -C "$here" ./internal/mkzip "$out/lambda-$arch.zip" "$tmp/$arch/bootstrap"
  echo "$out/lambda-$arch.zip"
done
