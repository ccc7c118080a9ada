#!/bin/sh
# install-rie.sh installs the AWS Lambda Runtime Interface Emulator
# (aws-lambda-rie), which the front-door tests and lambdafront run, into
# ${MCPFN_TOOLS:-$HOME/.cache/mcpfn/bin}, and prints its path.
#
# It builds the emulator from source with `go install` (about a minute), and
# does nothing if the pinned version is already there. The emulator runs on
# Linux only.
set -eu

module=github.com/aws/aws-lambda-runtime-interface-emulator
version=v0.0.0-20261030222936-bef5c4ba774d

dir=${MCPFN_TOOLS:-$HOME/.cache/mcpfn/bin}
bin=$dir/aws-lambda-rie

if [ -x "$bin" ] && go version -m "$bin" 2>/dev/null | grep -q "mod[[:space:]]*$module[[:space:]]*$version"; then
	echo "$bin"
	exit 0
fi

mkdir -p "$dir"
echo "installing $module/cmd/aws-lambda-rie@$version into $dir" >&2
GOBIN=$dir CGO_ENABLED=0 go install "$module/cmd/aws-lambda-rie@$version"
echo "$bin"
