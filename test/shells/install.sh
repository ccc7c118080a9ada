#!/bin/sh
# install.sh installs zsh and fish from Debian's packages, for the tests of
# `mcpfn completion zsh|fish` (cmd/mcpfn TestCompletion), into
# ${MCPFN_TOOLS:-$HOME/.cache/mcpfn}/shells, without root and without
# touching the system: the packages are downloaded (apt-get download) and
# unpacked (dpkg-deb -x). zsh is zsh-static (no library of its own); fish
# needs libpcre2-32, unpacked beside it. It prints two lines, zsh=PATH and
# fish=PATH (a wrapper that finds the library), and does nothing when they
# are already there.
set -eu

dir=${MCPFN_TOOLS:-$HOME/.cache/mcpfn}/shells
zsh=$dir/root/bin/zsh-static
fish=$dir/fish

if [ ! -x "$zsh" ] || [ ! -x "$fish" ]; then
	command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null ||
		{ echo "shells/install.sh: needs apt-get and dpkg-deb (Debian)" >&2; exit 2; }
	mkdir -p "$(dirname "$dir")"
	tmp=$(mktemp -d "$(dirname "$dir")/.shells.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	echo "shells/install.sh: installing zsh-static and fish into $dir" >&2
	pkgs="zsh-static fish libpcre2-32-0"
	if ! (cd "$tmp" && apt-get download $pkgs >&2); then
		# A machine whose package lists are empty: read them first.
		apt-get update -qq >&2
		(cd "$tmp" && apt-get download $pkgs >&2)
	fi
	for deb in "$tmp"/*.deb; do
		dpkg-deb -x "$deb" "$tmp/root"
	done
	lib=$(dirname "$(find "$tmp/root" -name 'libpcre2-32.so.0' | head -n1)")
	lib=$dir/root${lib#"$tmp/root"}
	printf '#!/bin/sh\nLD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec %s "$@"\n' \
		"$lib" "$dir/root/usr/bin/fish" > "$tmp/fish"
	chmod +x "$tmp/fish"
	rm -f "$tmp"/*.deb
	rm -rf "$dir"
	mv "$tmp" "$dir"
	trap - EXIT
fi
"$zsh" --version >/dev/null
"$fish" --version >/dev/null
echo "zsh=$zsh"
echo "fish=$fish"
