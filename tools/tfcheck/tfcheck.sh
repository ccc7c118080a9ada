#!/usr/bin/env bash
# Offline Terraform check: fmt -check + init + validate, and `tofu test` of the *.tftest.hcl files
# (mock providers), against locally built providers. Needs only Go and the Go module proxy.
#
#   tfcheck.sh [--fmt-only | --plan | --test] [DIR...]        (default: infra/terraform)
#   tfcheck.sh --schemas OUTDIR DIR...      the providers' schemas for the types DIRs use
#   tfcheck.sh --validators OUTFILE         the providers' verdicts on schemaprov/schemas/validators.txt
#   tfcheck.sh --outputs OUTFILE DIR        the outputs of DIR applied (data sources only: policies/)
#
# Two sets of providers (README.md):
#   - fast (the default): the tfcheck schema provider (schemaprov/), one small binary serving as
#     hashicorp/aws and hashicorp/random with the real providers' schemas for the types this
#     repository uses and their validators for the attributes it sets (committed files), with
#     OpenTofu (TFCHECK_CLI=tofu is the default).
#   - full (TFCHECK_FULL=1): the real providers, built from their module sources (a trimmed
#     hashicorp/aws, ~11 min, and hashicorp/random), with terraform 1.5.7 (TFCHECK_CLI=terraform
#     is then the default). The full stage also compares the committed files with these providers.
#
# Each DIR is a root module, or a module (validate accepts one; its variables are then unknown).
# It is checked in a copy, with the local modules it calls (source = "./..." or "../..."), without
# lock files or .terraform directories: a locally built provider never matches the registry's
# hashes. Each DIR gets one line, "tfcheck: ok   DIR" or "tfcheck: FAIL DIR (step)" followed by
# that step's output; the last line is "tfcheck: N passed, M failed". Exit status 1 if a DIR
# failed, 2 on a usage or build error.
#
# --fmt-only checks the format alone, for modules whose providers are not built here (google).
# --plan also runs `plan` (with TFCHECK_PLAN_ARGS, e.g. "-var zip_path=x.zip") on a fresh state
# with fake AWS credentials: no AWS call is made, and it evaluates what validate leaves unknown
# (variable values, file functions, data sources, preconditions). The DIR must configure
# provider "aws".
# --test also runs `test` (with TFCHECK_TEST_ARGS) in DIR with TFCHECK_TEST_CLI (tofu, the
# default: OpenTofu >= 1.8 runs mock_provider tests; terraform 1.5.7 has no mock providers): the
# *.tftest.hcl files of DIR and DIR/tests, offline. The line says "(N passed, M failed)" of the
# test runs.
# --schemas writes OUTDIR/aws.json and OUTDIR/random.json: what `tofu providers schema -json`
# reports for the provider configuration and the resource and data source types the .tf files
# under DIRs use, trimmed (schemaprov trim). With the real providers (TFCHECK_FULL=1) and
# OUTDIR=tools/tfcheck/schemaprov/schemas, it regenerates the committed schemas.
# --validators validates, with the providers of the stage, one resource per value of each line of
# validators.txt (each value it allows, and values it does not) and writes each resource's
# diagnostics to OUTFILE; it fails if an allowed value is refused or another one accepted. The
# full stage compares the real providers' file with the schema provider's.
# --outputs applies DIR (a configuration of data sources and outputs, such as policies/: with fake
# credentials, nothing that calls AWS) in a copy with a local state and writes `output -json` to
# OUTFILE: what the stage's providers compute for those data sources.
set -euo pipefail
shopt -s inherit_errexit   # a failed step inside $(build_cli ...) fails the build
FMT_ONLY=0 PLAN=0 TEST=0 SCHEMAS="" VALIDATORS="" OUTPUTS=""
case ${1:-} in
  --fmt-only) FMT_ONLY=1; shift ;;
  --plan) PLAN=1; shift ;;
  --test) TEST=1; shift ;;
  --schemas) SCHEMAS=${2:?--schemas OUTDIR DIR...}; shift 2 ;;
  --validators) VALIDATORS=${2:?--validators OUTFILE}; shift 2 ;;
  --outputs) OUTPUTS=${2:?--outputs OUTFILE DIR}; shift 2 ;;
esac
[ $# -gt 0 ] || set -- infra/terraform
CACHE=${TFCHECK_CACHE:-$HOME/.cache/tfcheck}
FULL=${TFCHECK_FULL:-0}            # 1: the real providers (and terraform 1.5.7 by default)
if [ "$FULL" = 1 ]; then
  CLI=${TFCHECK_CLI:-terraform}    # terraform (v1.5.7, the last MPL release), or tofu (then terraform is not built)
else
  CLI=${TFCHECK_CLI:-tofu}         # the fast stage: OpenTofu alone
fi
if [ -n "$SCHEMAS$VALIDATORS$OUTPUTS" ]; then CLI=tofu; fi   # schema JSON, validate -json and outputs as tofu prints them
TEST_CLI=${TFCHECK_TEST_CLI:-tofu} # what runs --test: tofu (mock providers since 1.8), or terraform (>= 1.7 only)
TOFU_VERSION=v1.12.6
TERRAFORM_VERSION=v1.5.7
# The tofu build leaves out what pulls in cloud SDKs and the checks do not use: the remote-state
# backends and state-encryption key providers (the checks use the local backend and no state
# encryption), go-getter's s3 and gcs module getters (the modules here come from local paths; a
# patched copy of go-getter without get_s3.go and get_gcs.go replaces it), and OpenTelemetry
# export (OTEL_TRACES_EXPORTER=otlp is refused): 799 packages to compile instead of 1267 (the
# backends and key providers alone dropped) and a 40 MB binary instead of 68.
TOFU_DROP_BACKENDS=azurerm,consul,cos,gcs,kubernetes,oss,pg,s3
TOFU_DROP_KEYPROVIDERS=aws_kms,azure_vault,gcp_kms,openbao
TOFU_DROP_OTHER=getter-s3-gcs,otel-export
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
key() { printf '%s\n' "$@" | sha256sum | cut -c1-12; }
# The CLIs and the providers are cached apart: one provider build serves both CLIs (each finds it
# under its own registry host name, a hard link).
TFBIN=$CACHE/terraform-$(key "$TERRAFORM_VERSION")
TOFUBIN=$CACHE/tofu-$(key "$TOFU_VERSION" "$TOFU_DROP_BACKENDS" "$TOFU_DROP_KEYPROVIDERS" "$TOFU_DROP_OTHER")
PBIN=$CACHE/aws-$(key "$AWS_PSEUDO" "$AWS_LABEL" "$AWS_SERVICES" "$AWS_SDK")
RBIN=$CACHE/random-$(key "$RANDOM_PSEUDO" "$RANDOM_LABEL")
# The schema provider, keyed by its sources (schemas and validators included: they are embedded).
SBIN=$CACHE/schemaprov-$(cd "$HERE/schemaprov" && find . -type f ! -name '*_test.go' -print0 | sort -z | xargs -0 sha256sum | key "$(cat)")
work=$(mktemp -d); trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
modsrc() { (cd "$work" && go mod download -json "$1" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p'); }

for d in "$@"; do
  [ -d "$d" ] || { echo "tfcheck: $d: not a directory" >&2; exit 2; }
done
case $FULL in 0 | 1) ;; *) echo "tfcheck: TFCHECK_FULL must be 0 or 1" >&2; exit 2 ;; esac
case $CLI/$TEST_CLI in
  terraform/terraform | terraform/tofu | tofu/tofu | tofu/terraform) ;;
  *) echo "tfcheck: TFCHECK_CLI and TFCHECK_TEST_CLI must be terraform or tofu" >&2; exit 2 ;;
esac
[ "$TEST" = 0 ] || [ "$TEST_CLI" = tofu ] || { echo "tfcheck: terraform $TERRAFORM_VERSION has no mock providers: --test needs TFCHECK_TEST_CLI=tofu" >&2; exit 2; }
trap 'echo "tfcheck: build failed" >&2; exit 2' ERR

# build_cli NAME: builds terraform or tofu into its cache directory, once; prints its path.
build_cli() {
  local s
  if [ "$1" = terraform ]; then
    if [ ! -x "$TFBIN/terraform" ]; then
      echo "tfcheck: building terraform $TERRAFORM_VERSION (fresh: ~340 s of CPU, ~5 min)" >&2; s=$(date +%s)
      mkdir -p "$TFBIN"
      GOBIN="$TFBIN" go install -trimpath -ldflags="-s -w" github.com/hashicorp/terraform@$TERRAFORM_VERSION
      echo "tfcheck: built terraform in $(($(date +%s) - s))s" >&2
    fi
    echo "$TFBIN/terraform"
  else
    if [ ! -x "$TOFUBIN/tofu" ]; then   # go install refuses: opentofu's go.mod has a replace directive
      echo "tfcheck: building tofu $TOFU_VERSION, trimmed (fresh: ~250 s of CPU)" >&2; s=$(date +%s)
      local d b k
      d=$(modsrc github.com/opentofu/opentofu@$TOFU_VERSION); cp -r "$d" "$work/tofu"; chmod -R u+w "$work/tofu"
      for b in ${TOFU_DROP_BACKENDS//,/ }; do   # the import of the backend's package, and its entry
        sed -i -e "/^\s*\"$b\":/d" "$work/tofu/internal/backend/init/init.go"
      done
      sed -i -E '/internal\/backend\/remote-state\/(azure|consul|cos|gcs|kubernetes|oss|pg|s3)"$/d' "$work/tofu/internal/backend/init/init.go"
      for k in ${TOFU_DROP_KEYPROVIDERS//,/ }; do
        sed -i -e "/keyprovider\/$k\"\$/d" -e "/RegisterKeyProvider($k\.New())/,+2d" "$work/tofu/internal/encryption/default_registry.go"
      done
      # go-getter without its s3 and gcs getters (they import the AWS SDK and Google Cloud Storage)
      local gg; gg=$(sed -n 's/^\s*github.com\/hashicorp\/go-getter \(v[^ ]*\).*/\1/p' "$work/tofu/go.mod")
      cp -r "$(modsrc "github.com/hashicorp/go-getter@$gg")" "$work/tofu/.tfcheck-go-getter"; chmod -R u+w "$work/tofu/.tfcheck-go-getter"
      rm "$work/tofu/.tfcheck-go-getter/get_s3.go" "$work/tofu/.tfcheck-go-getter/get_gcs.go"
      sed -i -e '/"gcs": *new(GCSGetter),/d' -e '/"s3": *new(S3Getter),/d' "$work/tofu/.tfcheck-go-getter/get.go"
      sed -i -e '/"gcs": *new(getter.GCSGetter),/d' -e '/"s3": *new(getter.S3Getter),/d' "$work/tofu/internal/getmodules/getter.go"
      (cd "$work/tofu" && go mod edit -replace github.com/hashicorp/go-getter=./.tfcheck-go-getter)
      # no OpenTelemetry exporters (autoexport brings in the OTLP and Prometheus exporters)
      sed -i -e '/"go.opentelemetry.io\/contrib\/exporters\/autoexport"/d' \
        -e 's/exporter, err := autoexport.NewSpanExporter(ctx)/exporter, err := sdktrace.SpanExporter(nil), fmt.Errorf("OpenTelemetry export is not built into this tofu (tfcheck)")/' \
        "$work/tofu/internal/tracing/init.go"
      mkdir -p "$TOFUBIN"
      (cd "$work/tofu" && go build -trimpath -ldflags="-s -w -X github.com/opentofu/opentofu/version.dev=no" -o "$TOFUBIN/tofu.tmp.$$" ./cmd/tofu)
      mv "$TOFUBIN/tofu.tmp.$$" "$TOFUBIN/tofu"   # a rename: a concurrent run sees all or nothing
      echo "tfcheck: built tofu in $(($(date +%s) - s))s" >&2
    fi
    echo "$TOFUBIN/tofu"
  fi
}
# install_plugin DIR NAME FILE VERSION: DIR/plugins/<both registry hosts>/hashicorp/NAME/VERSION/...
# holds FILE.
install_plugin() {
  local reg p
  for reg in registry.terraform.io registry.opentofu.org; do
    p=$1/plugins/$reg/hashicorp/$2/$4/$PLATFORM
    mkdir -p "$p"; ln -f "$3" "$p/terraform-provider-$2_v$4" 2>/dev/null || cp "$3" "$p/terraform-provider-$2_v$4"
  done
}
# build_schemaprov: the schema provider (its own module, built outside the workspace with its own
# go.sum), installed as both providers under SBIN/plugins.
build_schemaprov() {
  [ ! -x "$SBIN/plugins/registry.opentofu.org/hashicorp/aws/$AWS_LABEL/$PLATFORM/terraform-provider-aws_v$AWS_LABEL" ] || return 0
  local s; s=$(date +%s)
  mkdir -p "$SBIN"
  (cd "$HERE/schemaprov" && GOWORK=off GOFLAGS="-buildvcs=false -mod=readonly" go build -trimpath -ldflags="-s -w" -o "$SBIN/schemaprov.tmp.$$" .)
  mv "$SBIN/schemaprov.tmp.$$" "$SBIN/schemaprov"
  install_plugin "$SBIN" aws "$SBIN/schemaprov" "$AWS_LABEL"
  install_plugin "$SBIN" random "$SBIN/schemaprov" "$RANDOM_LABEL"
  echo "tfcheck: built the schema provider in $(($(date +%s) - s))s" >&2
}
need_schemaprov=0
[ "$FULL" = 1 ] && [ -z "$SCHEMAS$VALIDATORS$OUTPUTS" ] || need_schemaprov=1
[ "$FMT_ONLY" = 0 ] || need_schemaprov=0
sp_pid=""
if [ "$need_schemaprov" = 1 ]; then   # alongside the CLI's build: the two cores overlap downloads and links
  build_schemaprov > "$work/schemaprov.log" 2>&1 & sp_pid=$!
fi
TF=$(build_cli "$CLI")
TT=$TF
if [ "$TEST" = 1 ]; then TT=$(build_cli "$TEST_CLI"); fi
if [ -n "$sp_pid" ]; then
  if ! wait "$sp_pid"; then cat "$work/schemaprov.log" >&2; false; fi
  cat "$work/schemaprov.log" >&2
fi

if [ "$FULL" = 1 ] && [ "$FMT_ONLY" = 0 ] && [ ! -x "$PBIN/plugins/registry.opentofu.org/hashicorp/aws/$AWS_LABEL/$PLATFORM/terraform-provider-aws_v$AWS_LABEL" ]; then
  echo "tfcheck: building trimmed terraform-provider-aws (fresh: ~11 min)"; s=$(date +%s)
  d=$(modsrc github.com/hashicorp/terraform-provider-aws@$AWS_PSEUDO); cp -r "$d" "$work/aws"; chmod -R u+w "$work/aws"
  (cd "$HERE/awstrim" && go build -o "$work/awstrim" .)
  (cd "$work/aws" && "$work/awstrim" . "$AWS_SERVICES" "$AWS_SDK" &&
   go build -trimpath -ldflags="-s -w -X github.com/hashicorp/terraform-provider-aws/version.ProviderVersion=$AWS_LABEL" -o "$work/tpa" .)
  mkdir -p "$PBIN"; mv "$work/tpa" "$PBIN/terraform-provider-aws"
  install_plugin "$PBIN" aws "$PBIN/terraform-provider-aws" "$AWS_LABEL"
  echo "tfcheck: built the aws provider in $(($(date +%s) - s))s"
fi
if [ "$FULL" = 1 ] && [ "$FMT_ONLY" = 0 ] && [ ! -x "$RBIN/plugins/registry.opentofu.org/hashicorp/random/$RANDOM_LABEL/$PLATFORM/terraform-provider-random_v$RANDOM_LABEL" ]; then
  echo "tfcheck: building terraform-provider-random (fresh: ~1 min)"
  d=$(modsrc github.com/hashicorp/terraform-provider-random@$RANDOM_PSEUDO); cp -r "$d" "$work/random"; chmod -R u+w "$work/random"
  (cd "$work/random" && go build -trimpath -ldflags="-s -w" -o "$work/tpr" .)
  mkdir -p "$RBIN"; mv "$work/tpr" "$RBIN/terraform-provider-random"
  install_plugin "$RBIN" random "$RBIN/terraform-provider-random" "$RANDOM_LABEL"
fi
# The -plugin-dir arguments of init: the stage's providers.
if [ "$FULL" = 1 ]; then
  PLUGIN_ARGS=(-plugin-dir="$PBIN/plugins" -plugin-dir="$RBIN/plugins")
else
  PLUGIN_ARGS=(-plugin-dir="$SBIN/plugins")
fi

trap - ERR
export TF_CLI_CONFIG_FILE=/dev/null TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1

# providers_dir DIR: DIR initialised for hashicorp/aws and hashicorp/random from the stage's providers.
providers_dir() {
  mkdir -p "$1"
  printf '%s\n' 'terraform {' '  required_providers {' '    aws = {' '      source = "hashicorp/aws"' '    }' \
    '    random = {' '      source = "hashicorp/random"' '    }' '  }' '}' > "$1/main.tf"
  (cd "$1" && TF_DATA_DIR="$1/.terraform" "$TF" init -backend=false -input=false -no-color "${PLUGIN_ARGS[@]}" > "$1/init.log" 2>&1) ||
    { cat "$1/init.log" >&2; return 1; }
}
if [ -n "$SCHEMAS" ]; then
  # The types of the resource and data blocks under the DIRs, per provider.
  types=$(find "$@" -name .terraform -prune -o -name '*.tf' -print0 | xargs -0 cat |
    sed -n 's/^\s*\(resource\|data\)\s*"\(\(aws\|random\)_[a-z0-9_]*\)".*/\1:\2/p' | sort -u)
  providers_dir "$work/schemas" || exit 2
  (cd "$work/schemas" && TF_DATA_DIR="$work/schemas/.terraform" "$TF" providers schema -json > "$work/schemas.json") || exit 2
  mkdir -p "$SCHEMAS"
  for p in aws random; do
    # shellcheck disable=SC2046 # one argument per type
    "$SBIN/schemaprov" trim "registry.opentofu.org/hashicorp/$p" $(grep ":${p}_" <<<"$types") < "$work/schemas.json" > "$work/$p.json" || exit 1
    mv "$work/$p.json" "$SCHEMAS/$p.json"
  done
  echo "tfcheck: wrote $SCHEMAS/aws.json and $SCHEMAS/random.json ($(wc -l <<<"$types") types; $([ "$FULL" = 1 ] && echo 'the real providers' || echo 'the schema provider'))"
  exit 0
fi
if [ -n "$OUTPUTS" ]; then
  src=$1
  "$TF" fmt -check -diff -no-color "$src" || { echo "tfcheck: FAIL $src (fmt)"; exit 1; }
  mkdir -p "$work/outputs"; cp -r "$src/." "$work/outputs/"
  rm -rf "$work/outputs/.terraform" "$work/outputs/.terraform.lock.hcl" "$work/outputs"/terraform.tfstate*
  if ! (cd "$work/outputs" && export TF_DATA_DIR="$work/outputs/.terraform" &&
        "$TF" init -backend=false -input=false -no-color "${PLUGIN_ARGS[@]}" &&
        env -u AWS_PROFILE -u AWS_SESSION_TOKEN -u AWS_CONFIG_FILE -u AWS_SHARED_CREDENTIALS_FILE \
          "$TF" apply -auto-approve -input=false -no-color -lock=false &&
        "$TF" output -json -no-color > "$work/outputs.json") > "$work/outputs.log" 2>&1; then
    sed 's/^/    /' "$work/outputs.log"
    echo "tfcheck: FAIL $src (apply)"
    exit 1
  fi
  mv "$work/outputs.json" "$OUTPUTS"
  echo "tfcheck: ok   $src: wrote its outputs to $OUTPUTS ($([ "$FULL" = 1 ] && echo 'the real providers' || echo 'the schema provider'))"
  exit 0
fi
if [ -n "$VALIDATORS" ]; then
  providers_dir "$work/validators" || exit 2
  "$SBIN/schemaprov" validator-config "$work/validators" || exit 2
  (cd "$work/validators" && TF_DATA_DIR="$work/validators/.terraform" "$TF" validate -json -no-color > "$work/validate.json" 2> "$work/validate.err") ||
    :   # exit status 1: the refused values; the report judges the output
  if ! "$SBIN/schemaprov" validator-report < "$work/validate.json" > "$VALIDATORS"; then
    cat "$work/validate.err" >&2
    echo "tfcheck: FAIL validators ($([ "$FULL" = 1 ] && echo 'the real providers' || echo 'the schema provider'); the cases are in $VALIDATORS)"
    exit 1
  fi
  echo "tfcheck: ok   validators: $(grep -c . "$VALIDATORS") lines of verdicts ($([ "$FULL" = 1 ] && echo 'the real providers' || echo 'the schema provider'))"
  exit 0
fi

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
    "${PLUGIN_ARGS[@]}" 2>&1) || return 1
  step=validate
  report=$(cd "$cfg" && TF_DATA_DIR="$work/data$2" "$TF" validate -no-color 2>&1) || return 1
  if [ "$TEST" = 1 ]; then
    step=test
    local tdata=$work/data$2
    if [ "$TT" != "$TF" ]; then   # the test CLI keeps its own .terraform
      tdata=$work/tdata$2
      report=$(cd "$cfg" && TF_DATA_DIR="$tdata" "$TT" init -backend=false -input=false -no-color \
        "${PLUGIN_ARGS[@]}" 2>&1) || return 1
    fi
    # shellcheck disable=SC2086 # TFCHECK_TEST_ARGS is a list of arguments
    report=$(cd "$cfg" && env -u AWS_PROFILE -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN \
      TF_DATA_DIR="$tdata" "$TT" test -no-color ${TFCHECK_TEST_ARGS:-} 2>&1) || return 1
    grep -q '^Success! [1-9]' <<<"$report" || { report="no test ran: $report"; return 1; }
  fi
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
    [ "$TEST" = 0 ] || mode=" ($(grep -o '^Success! .*' <<<"$report"))"
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
