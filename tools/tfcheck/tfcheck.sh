#!/usr/bin/env bash
# Offline Terraform check: fmt -check + init + validate (terraform 1.5.7, or tofu) against locally
# built providers: a trimmed hashicorp/aws and hashicorp/random. Needs only Go and the Go module proxy.
#
#   tfcheck.sh [--fmt-only | --plan] [DIR...]        (default: infra/terraform)
#
# Each DIR is a root module, or a module (validate accepts one; its variables are then unknown).
# It is checked in a copy, with the local modules it calls (source = "./..." or "../..."), without
# lock files or .terraform directories: a locally built provider never matches the registry's
# hashes. Each DIR gets one line, "tfcheck: ok   DIR" or "tfcheck: FAIL DIR (step)" followed by
# that step's output; the last line is "tfcheck: N passed, M failed". Exit status 1 if a DIR
# failed, 2 on a usage or build error.
#
# --fmt-only checks the format alone, for modules whose providers are not built here (google).
# --plan also runs `terraform plan` (with TFCHECK_PLAN_ARGS, e.g. "-var zip_path=x.zip") on a
# fresh state with fake AWS credentials: no AWS call is made, and it evaluates what validate
# leaves unknown (variable values, file functions, the provider's plan-time checks). The DIR
# must configure provider "aws".
set -euo pipefail
FMT_ONLY=0 PLAN=0
case ${1:-} in
  --fmt-only) FMT_ONLY=1; shift ;;
  --plan) PLAN=1; shift ;;
esac
[ $# -gt 0 ] || set -- infra/terraform
CACHE=${TFCHECK_CACHE:-$HOME/.cache/tfcheck}
CLI=${TFCHECK_CLI:-terraform}      # terraform (v1.5.7, last MPL release: builds ~3x faster than tofu), or tofu
TOFU_VERSION=v1.12.6
TERRAFORM_VERSION=v1.5.7
AWS_PSEUDO=v1.60.1-0.20260602190131-5f2286d6d836   # terraform-provider-aws main @ 2026-06-02 (6.47.1+)
AWS_LABEL=6.47.1                                     # version the mirror advertises
# provider service packages to compile (internal/service/<x>) and the AWS SDK clients they need
AWS_SERVICES=iam,lambda,dynamodb,secretsmanager,logs,sts,meta,kms,apigateway
AWS_SDK=iam,lambda,cloudwatchlogs,dynamodb,kms,secretsmanager,sts,s3,ec2,organizations,account,apigateway
# terraform-provider-random has no v3 tags the module proxy serves (its go.mod path is
# github.com/terraform-providers/...), but it serves main's pseudo-versions: main @ 2026-08-24 (3.9.0+)
RANDOM_PSEUDO=v1.3.2-0.20260824155315-e1092b0cfc07
RANDOM_LABEL=3.9.0
HERE=$(cd "$(dirname "$0")" && pwd)
export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local
PLATFORM=$(go env GOOS)_$(go env GOARCH)
key=$(printf '%s\n' "$CLI" "$TOFU_VERSION" "$TERRAFORM_VERSION" "$AWS_PSEUDO" "$AWS_SERVICES" "$AWS_SDK" | sha256sum | cut -c1-12)
BIN=$CACHE/$key; mkdir -p "$BIN"
RBIN=$CACHE/random-$(printf '%s\n' "$RANDOM_PSEUDO" | sha256sum | cut -c1-12)
work=$(mktemp -d); trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
modsrc() { (cd "$work" && go mod download -json "$1" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p'); }

for d in "$@"; do
  [ -d "$d" ] || { echo "tfcheck: $d: not a directory" >&2; exit 2; }
done
trap 'echo "tfcheck: build failed" >&2; exit 2' ERR

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
P=$BIN/plugins/$REG/hashicorp/aws/$AWS_LABEL/$PLATFORM
if [ "$FMT_ONLY" = 0 ] && [ ! -x "$P/terraform-provider-aws_v$AWS_LABEL" ]; then
  echo "tfcheck: building trimmed terraform-provider-aws (fresh: ~11 min)"
  d=$(modsrc github.com/hashicorp/terraform-provider-aws@$AWS_PSEUDO); cp -r "$d" "$work/aws"; chmod -R u+w "$work/aws"
  (cd "$HERE/awstrim" && go build -o "$work/awstrim" .)
  (cd "$work/aws" && "$work/awstrim" . "$AWS_SERVICES" "$AWS_SDK" &&
   go build -trimpath -ldflags="-s -w -X github.com/hashicorp/terraform-provider-aws/version.ProviderVersion=$AWS_LABEL" -o "$work/tpa" .)
  mkdir -p "$P"; mv "$work/tpa" "$P/terraform-provider-aws_v$AWS_LABEL"
fi
R=$RBIN/plugins/$REG/hashicorp/random/$RANDOM_LABEL/$PLATFORM
if [ "$FMT_ONLY" = 0 ] && [ ! -x "$R/terraform-provider-random_v$RANDOM_LABEL" ]; then
  echo "tfcheck: building terraform-provider-random (fresh: ~1 min)"
  d=$(modsrc github.com/hashicorp/terraform-provider-random@$RANDOM_PSEUDO); cp -r "$d" "$work/random"; chmod -R u+w "$work/random"
  (cd "$work/random" && go build -trimpath -ldflags="-s -w" -o "$work/tpr" .)
  mkdir -p "$R"; mv "$work/tpr" "$R/terraform-provider-random_v$RANDOM_LABEL"
fi

trap - ERR
export TF_CLI_CONFIG_FILE=/dev/null TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1

# localmods DIR: DIR and the local modules it calls, transitively, as absolute paths.
localmods() {
  local -a queue=("$(realpath "$1")"); local -A seen=(); local d src
  while [ ${#queue[@]} -gt 0 ]; do
    d=${queue[0]}; queue=("${queue[@]:1}")
    [ -z "${seen[$d]:-}" ] || continue
    seen[$d]=1; echo "$d"
    while IFS= read -r src; do
      queue+=("$(realpath -m "$d/$src")")
    done < <(sed -n 's/^\s*source\s*=\s*"\(\.\.\{0,1\}\/[^"]*\)".*/\1/p' "$d"/*.tf 2>/dev/null)
  done
}

# check DIR N: fmt, copy, init, validate. Sets step and report (the output of the last step run).
check() {
  local dir=$1 root=$work/tree$2 m cfg
  step=fmt
  report=$("$TF" fmt -check -recursive -diff -no-color "$dir" 2>&1) || return 1
  [ "$FMT_ONLY" = 0 ] || return 0
  while IFS= read -r m; do   # the modules it calls are checked for format, and copied
    [ -d "$m" ] || { report="module directory $m not found"; return 1; }
    report=$("$TF" fmt -check -diff -no-color "$m" 2>&1) || return 1
    mkdir -p "$root$m"; cp -r "$m/." "$root$m/"
  done < <(localmods "$dir")
  find "$root" \( -name .terraform -o -name .terraform.lock.hcl -o -name 'terraform.tfstate*' \) -prune -exec rm -rf {} +
  cfg=$root$(realpath "$dir")
  step=init
  report=$(cd "$cfg" && TF_DATA_DIR="$work/data$2" "$TF" init -backend=false -input=false -no-color \
    -plugin-dir="$BIN/plugins" -plugin-dir="$RBIN/plugins" 2>&1) || return 1
  step=validate
  report=$(cd "$cfg" && TF_DATA_DIR="$work/data$2" "$TF" validate -no-color 2>&1) || return 1
  [ "$PLAN" = 1 ] || return 0
  step=plan
  printf '%s\n' 'provider "aws" {' '  access_key                  = "tfcheck"' '  secret_key                  = "tfcheck"' \
    '  skip_credentials_validation = true' '  skip_requesting_account_id  = true' '  skip_metadata_api_check     = true' '}' \
    > "$cfg/tfcheck_override.tf"
  # shellcheck disable=SC2086 # TFCHECK_PLAN_ARGS is a list of arguments
  report=$(cd "$cfg" && env -u AWS_PROFILE -u AWS_SESSION_TOKEN -u AWS_CONFIG_FILE -u AWS_SHARED_CREDENTIALS_FILE \
    TF_DATA_DIR="$work/data$2" "$TF" plan -input=false -no-color -lock=false ${TFCHECK_PLAN_ARGS:-} 2>&1) || return 1
}

passed=0; failed=0; n=0
for dir in "$@"; do
  n=$((n + 1))
  if check "$dir" "$n"; then
    mode=""
    [ "$FMT_ONLY" = 0 ] || mode=" (fmt only)"
    [ "$PLAN" = 0 ] || mode=" ($(grep -o '^Plan: .*' <<<"$report" || echo 'plan: no changes'))"
    passed=$((passed + 1)); echo "tfcheck: ok   $dir$mode"
    if grep -q '^Warning:' <<<"$report"; then sed -n '/^Warning:/,$p' <<<"$report" | sed 's/^/    /'; fi
  else
    failed=$((failed + 1)); echo "tfcheck: FAIL $dir ($step)"
    # a failed plan: its errors, not the whole plan
    if [ "$step" = plan ] && grep -q '^Error:' <<<"$report"; then report=$(sed -n '/^Error:/,$p' <<<"$report"); fi
    printf '%s\n' "$report" | sed 's/^/    /'
  fi
done
echo "tfcheck: $passed passed, $failed failed"
[ "$failed" = 0 ]
