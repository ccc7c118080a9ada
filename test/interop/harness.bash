# harness.bash: the shell functions the interop scripts share (test/interop,
# test/interop-tasks, test/interop-ext-tasks); source it once ROOT is set.

# node_packages ARG DIR PACKAGE...: installs Node and the PACKAGEs into DIR
# (test/node/install.sh) and sets node to Node's path. When ARG, the calling
# script's first argument, is --install, prints "node=PATH" and "dir=DIR" and
# exits.
node_packages() {
  local arg=$1 dir=$2
  shift 2
  node=$("$ROOT/test/node/install.sh")
  "$ROOT/test/node/install.sh" "$dir" "$@" >/dev/null
  if [ "$arg" = --install ]; then
    echo "node=$node"
    echo "dir=$dir"
    exit 0
  fi
}

# serving_url FILE PID TRIES: waits until FILE holds the "serving MCP on URL"
# line a server logs once it listens, polling every 0.1 s at most TRIES
# times, and stops early if process PID has exited. Prints the URL, or
# nothing if none came.
serving_url() {
  local file=$1 pid=$2 tries=$3 url=""
  for _ in $(seq 1 "$tries"); do
    url=$(sed -n 's/.*serving MCP on \(http[^ ]*\).*/\1/p' "$file" | head -n1)
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "$url"
}
