#!/usr/bin/env bash
# package.sh DIR PKG: build PKG (a main package of this repository's
# workspace using adapters/workers) into a Worker directory DIR for the
# tests with `mcpfn package workers` (so that every test of the adapter
# runs what the packager writes): app.wasm, Go's wasm_exec.js, the glue,
# wrangler.toml and workerd.capnp, a configuration for a local workerd with
# the Durable Object bindings and in-memory storage. "# extra bindings" in
# it marks where a test adds text bindings.
set -euo pipefail
dir=$1 pkg=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
cd "$ROOT"
go run ./cmd/mcpfn package workers -o "$dir" "$pkg" > /dev/null
grep -q '^    # extra bindings$' "$dir/workerd.capnp" ||
  { echo "package.sh: $dir/workerd.capnp has no '# extra bindings' marker" >&2; exit 1; }
