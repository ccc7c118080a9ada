#!/usr/bin/env bash
# package.sh DIR PKG: build PKG (a main package of this repository's
# workspace using adapters/workers) into a Worker directory DIR for the
# tests: app.wasm, Go's wasm_exec.js, the glue, and workerd.capnp, a
# configuration for a local workerd with the Durable Object bindings and
# in-memory storage. "# extra bindings" in it marks where a test adds text
# bindings.
set -euo pipefail
dir=$1 pkg=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$dir"
(cd "$ROOT" && GOOS=js GOARCH=wasm CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -buildvcs=false -o "$dir/app.wasm" "$pkg")
cp "$(go env GOROOT)/lib/wasm/wasm_exec.js" "$dir/"
cp "$ROOT"/adapters/workers/glue/*.mjs "$dir/"
cat > "$dir/workerd.capnp" <<'CAPNP'
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    # A local run may call services on this machine (an authorization
    # server on loopback); workerd's default network is public only.
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:8787", http = (), service = "main") ],
);

const worker :Workerd.Worker = (
  modules = [
    (name = "worker.mjs", esModule = embed "worker.mjs"),
    (name = "state.mjs", esModule = embed "state.mjs"),
    (name = "wasm_exec.js", esModule = embed "wasm_exec.js"),
    (name = "app.wasm", wasm = embed "app.wasm"),
  ],
  compatibilityDate = "2026-11-01",
  globalOutbound = "internet",
  bindings = [
    # extra bindings
    (name = "MCPFN_LOCAL_ADDR", text = "127.0.0.1:8787"),
    (name = "MCPFN_STATE", durableObjectNamespace = "McpfnState"),
    (name = "MCPFN_TASKS", service = (name = "main", entrypoint = "McpfnTasks")),
  ],
  durableObjectNamespaces = [ (className = "McpfnState", uniqueKey = "mcpfn-state") ],
  durableObjectStorage = (inMemory = void),
);
CAPNP
