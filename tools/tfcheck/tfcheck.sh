#!/usr/bin/env bash
# Offline Terraform check: fmt -check + validate (tofu or terraform 1.5.7) against a locally
# built (trimmed) hashicorp/aws provider. Needs only Go and the Go module proxy.
set -euo pipefail
TF_DIR=${1:-infra/terraform}
CACHE=${TFCHECK_CACHE:-$HOME/.cache/tfcheck}
CLI=${TFCHECK_CLI:-terraform}      # terraform (v1.5.7, last MPL release: builds ~3x faster than tofu), or tofu
TOFU_VERSION=v1.12.6
TERRAFORM_VERSION=v1.5.7
AWS_PSEUDO=v1.60.1-0.20260602190131-5f2286d6d836   # terraform-provider-aws main @ 2026-06-02 (6.47.1+)
AWS_LABEL=6.47.1                                     # version the mirror advertises
# provider service packages to compile (internal/service/<x>) and the AWS SDK clients they need
AWS_SERVICES=iam,lambda,dynamodb,secretsmanager,logs,sts,meta,kms,apigateway
AWS_SDK=iam,lambda,cloudwatchlogs,dynamodb,kms,secretsmanager,sts,s3,ec2,organizations,account,apigateway
HERE=$(cd "$(dirname "$0")" && pwd)
export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local
key=$(printf '%s\n' "$CLI" "$TOFU_VERSION" "$TERRAFORM_VERSION" "$AWS_PSEUDO" "$AWS_SERVICES" "$AWS_SDK" | sha256sum | cut -c1-12)
BIN=$CACHE/$key; mkdir -p "$BIN"
work=$(mktemp -d); trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
modsrc() { (cd "$work" && go mod download -json "$1" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p'); }

if [ "$CLI" = terraform ]; then
  REG=registry.terraform.io
  if [ ! -x "$BIN/terraform" ]; then
    echo "tfcheck: building terraform $TERRAFORM_VERSION (fresh: ~5 min)"
    GOBIN="$BIN" go install -trimpath -ldflags="-s -w" github.com/hashicorp/terraform@$TERRAFORM_VERSION
  fi
else
  REG=registry.opentofu.org
  if [ ! -x "$BIN/tofu" ]; then   # go install refuses: opentofu's go.mod has a replace directive
    echo "tfcheck: building tofu $TOFU_VERSION (fresh: ~17 min)"
    d=$(modsrc github.com/opentofu/opentofu@$TOFU_VERSION); cp -r "$d" "$work/tofu"; chmod -R u+w "$work/tofu"
    (cd "$work/tofu" && go build -trimpath -ldflags="-s -w -X github.com/opentofu/opentofu/version.dev=no" -o "$BIN/tofu.tmp" ./cmd/tofu)
    mv "$BIN/tofu.tmp" "$BIN/tofu"
  fi
fi
TF=$BIN/$CLI
P=$BIN/plugins/$REG/hashicorp/aws/$AWS_LABEL/linux_amd64
if [ ! -x "$P/terraform-provider-aws_v$AWS_LABEL" ]; then
  echo "tfcheck: building trimmed terraform-provider-aws (fresh: ~11 min)"
  d=$(modsrc github.com/hashicorp/terraform-provider-aws@$AWS_PSEUDO); cp -r "$d" "$work/aws"; chmod -R u+w "$work/aws"
  (cd "$HERE/awstrim" && go build -o "$work/awstrim" .)
  (cd "$work/aws" && "$work/awstrim" . "$AWS_SERVICES" "$AWS_SDK" &&
   go build -trimpath -ldflags="-s -w -X github.com/hashicorp/terraform-provider-aws/version.ProviderVersion=$AWS_LABEL" -o "$work/tpa" .)
  mkdir -p "$P"; mv "$work/tpa" "$P/terraform-provider-aws_v$AWS_LABEL"
fi

export TF_CLI_CONFIG_FILE=/dev/null TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1 TF_DATA_DIR="$work/.tfdata"
"$TF" fmt -check -recursive -diff "$TF_DIR"
# validate a copy without the lock file: a locally built provider never matches registry hashes
cp -r "$TF_DIR" "$work/cfg"; rm -rf "$work/cfg/.terraform" "$work/cfg/.terraform.lock.hcl"
(cd "$work/cfg" && "$TF" init -backend=false -input=false -no-color -plugin-dir="$BIN/plugins" >/dev/null &&
 "$TF" validate -no-color)
echo "tfcheck: 1 passed, 0 failed"
