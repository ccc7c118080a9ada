#!/usr/bin/env bash
# worksum.sh [-w]: checks that go.work.sum holds exactly the checksums the go
# command records in it for this workspace: it rebuilds go.work.sum from
# nothing in a copy of go.work (with absolute paths, so the modules are read
# in place), running what the project's commands run (the module graph and
# every package of every module with its tests: go list -m all, go list
# -deps -test work), and compares. A missing line means any go command in a
# fresh clone rewrites the file; an extra one is stale. -w writes the
# rebuilt file over go.work.sum. Used by test/lint.sh and test/policy.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp go.work "$tmp/go.work"
for d in $(test/modules.sh); do
  go work edit -dropuse="$d" -use="$ROOT/${d#./}" "$tmp/go.work"
done
: > "$tmp/go.work.sum"
export GOWORK=$tmp/go.work GOFLAGS=-mod=readonly
go list -m all > /dev/null
go list -deps -test work > /dev/null
if [ "${1:-}" = -w ]; then
  cp "$tmp/go.work.sum" go.work.sum
  exit 0
fi
if ! diff -u go.work.sum "$tmp/go.work.sum" > "$tmp/diff"; then
  echo "go.work.sum is stale (- lines no go command needs, + lines any go command in a fresh clone adds):"
  cat "$tmp/diff"
  echo "run test/policy/worksum.sh -w"
  exit 1
fi
