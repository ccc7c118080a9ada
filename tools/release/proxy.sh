#!/usr/bin/env bash
# proxy.sh DIR VERSION: writes into DIR a file-system module proxy
# (GOPROXY=file://DIR) holding every public module of the repository at
# VERSION as the release tool (tools/release) would tag it: sibling requires
# at VERSION, the files git tracks or would track, zipped by
# golang.org/x/mod/zip. Extra arguments before DIR go to the tool (-as-is:
# the modules exactly as the tree has them). Try a release with
#   GOPROXY=file://DIR,$(go env GOPROXY) GONOSUMDB=github.com/mcpfn/mcpfn GOWORK=off go get ...
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)   # -P: the tool walks ROOT, which must not be a link
flags=()
while [ $# -gt 2 ]; do flags+=("$1"); shift; done
if [ $# -ne 2 ]; then echo "usage: $0 [-as-is] DIR VERSION" >&2; exit 2; fi
mkdir -p "$1"
dir=$(cd "$1" && pwd)
cd "$ROOT/tools/release"
GOWORK=off GOFLAGS=-mod=readonly exec go run . -root "$ROOT" "${flags[@]}" proxy "$dir" "$2"
