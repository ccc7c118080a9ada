#!/usr/bin/env bash
# workers.sh WORKDIR: serve the fixture as a Cloudflare Worker inside
# workerd (test/workers/install.sh): examples/everything built for js/wasm,
# run by the adapter's glue, state in Durable Objects held in memory.
# MCPFN_GO_INSTANCE=request starts a fresh Go instance for every request,
# which proves that every piece of cross-request state lives in Durable
# Objects. Prints "serving MCP on URL"; runs until killed.
set -euo pipefail
work=$1
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
workerd=$("$ROOT/test/workers/install.sh")
dir="$work/worker"
"$ROOT/test/workers/package.sh" "$dir" ./examples/everything >&2
# The fixture's state key: every instance seals and opens with it.
key=$(head -c 32 /dev/urandom | base64)
extra="(name = \"MCPFN_STATE_KEY\", text = \"$key\"),"
if [ -n "${MCPFN_GO_INSTANCE:-}" ]; then
  extra="$extra (name = \"MCPFN_GO_INSTANCE\", text = \"$MCPFN_GO_INSTANCE\"),"
fi
sed "s|# extra bindings|$extra|" "$dir/workerd.capnp" > "$dir/conformance.capnp"
ctl="$work/workerd.ctl"
mkfifo "$ctl"
stdbuf -oL "$workerd" serve "$dir/conformance.capnp" --socket-addr http=127.0.0.1:0 --control-fd 3 3>"$ctl" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT TERM INT
port=$(sed -n 's/.*"event":"listen".*"port":\([0-9]*\).*/\1/p;T;q' < "$ctl")
[ -n "$port" ] || { echo "workers.sh: workerd did not listen" >&2; exit 1; }
echo "workers: serving MCP on http://127.0.0.1:$port/mcp"
wait $pid
