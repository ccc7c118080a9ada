#!/usr/bin/env bash
# check.sh: the Terraform stage of test/all.sh.
#
#   test/terraform/check.sh                  the fast stage (the default): OpenTofu and the tfcheck
#                                            schema provider, ~3.5 minutes cold on 2 cores, 1.5 warm
#   TFCHECK_FULL=1 test/terraform/check.sh   the full stage (make terraform-full): terraform 1.5.7,
#                                            OpenTofu and the real providers built from source
#                                            (~20 minutes cold), and the schema provider checked
#                                            against them
#
# The fast stage stands the schema provider (tools/tfcheck/schemaprov) in for hashicorp/aws and
# hashicorp/random: the real providers' schemas for the types used here and their validators for
# the attributes set here, from committed files that the full stage compares with the real
# providers (0 below). Both stages run every check:
#
#  0. The providers against the committed files: the schemas they report for the resource and
#     data source types of the .tf files here equal tools/tfcheck/schemaprov/schemas/*.json (the
#     fast stage: the schema provider serves exactly them, and they cover every type used; the
#     full stage: the real providers' are the same), and each line of validators.txt holds for
#     them (every value it allows validates, others fail); the full stage also requires the real
#     providers' diagnostics to be the schema provider's, word for word. The data sources the
#     plans read (aws_region, aws_partition, aws_iam_policy_document: tools/tfcheck/policies)
#     compute what the real provider computed (policies/want.json).
#  1. tools/tfcheck/tfcheck.sh (fmt -check, init against the stage's providers, validate) on
#     every directory of .tf files under infra/terraform and test/terraform/fixtures; those that
#     need a provider not built offline (hashicorp/google) or a module from a git source get
#     fmt -check only (examples/own-function is checked in full in 5).
#  2. plan of examples/lambda, offline (fake credentials, fresh state, stand-in zip), with the
#     defaults and with the REST API, a public URL and x86_64.
#  3. The mock-provider tests of modules/mcp-lambda (tofu test, tests/*.tftest.hcl: command =
#     apply against mock_provider "aws", offline).
#  4. Negative tests: broken copies of modules/mcp-lambda must fail, each with its own error:
#     validate for a misspelt attribute and a value the module's validation refuses; plan for a
#     public URL without auth; the mock tests for a wrong invoke_mode (the provider's validator)
#     and for broken wiring that validates (an invoke mode or MCPFN_STREAMING that ignores
#     streaming, a wrong IAM resource, a misspelt environment variable, a wrong TTL attribute, a
#     dropped refusal, tasks off by default or without MCPFN_TASK_RUNNER=lambda, no tasks without
#     MCPFN_TASK_RUNNER=none, a self-invocation grant on any function or without tasks, a task
#     claim timeout misspelt or unbounded); validate for a task claim timeout the module refuses.
#  5. examples/own-function, whose module source is the git URL of a release, in a copy whose
#     source is rewritten to this checkout's modules/mcp-lambda (exactly that one line: the
#     rewrite is checked, and refuses a source it does not expect): validate, plan, tofu test.
#
# What only the full stage checks: terraform 1.5.7 itself (the fast stage validates and plans
# with OpenTofu), the real providers' behaviour beyond their schemas and the listed validators
# (their other validators: names, ARNs, IAM policy JSON; their plan-time checks), and the
# comparison of the committed files with them (tools/tfcheck/README.md).
#
# Exits 0 only if every good configuration passes and every broken one fails as expected; the
# last line is the summary. The HCL-versus-Go comparisons are Go tests: go test ./test/terraform/
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
TFCHECK=$ROOT/tools/tfcheck/tfcheck.sh
MODULE=infra/terraform/modules/mcp-lambda
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

FULL=${TFCHECK_FULL:-0}
STAGE=fast
[ "$FULL" = 1 ] && STAGE=full
SCHEMAS=tools/tfcheck/schemaprov/schemas

# 0. The providers against the committed schemas and validators.
schemas=0 validators=0 nvalidators=1 failed0=0
if out=$("$TFCHECK" --schemas "$work/schemas" infra/terraform test/terraform 2>&1); then
  echo "$out"
  for p in aws random; do
    if diff -u "$SCHEMAS/$p.json" "$work/schemas/$p.json" > "$work/schemas-$p.diff"; then
      schemas=$((schemas + 1)); echo "schemas: ok   $p: the $STAGE stage's provider reports $SCHEMAS/$p.json"
    else
      failed0=1; echo "schemas: FAIL $p: the $STAGE stage's provider reports another schema than $SCHEMAS/$p.json (regenerate it: tools/tfcheck/README.md):"
      head -100 "$work/schemas-$p.diff" | sed 's/^/    /'
    fi
  done
else
  rc=$?
  echo "$out"
  echo "terraform: FAIL (tfcheck --schemas exited $rc)"
  exit 1
fi
# The data sources the plans read (tools/tfcheck/policies): what the real aws provider computes
# for them is committed (want.json); the stage's provider must compute the same.
rendered=0
if "$TFCHECK" --outputs "$work/outputs.json" tools/tfcheck/policies &&
   diff -u tools/tfcheck/policies/want.json "$work/outputs.json" > "$work/outputs.diff"; then
  rendered=1; echo "data sources: ok   the $STAGE stage's aws provider computes tools/tfcheck/policies/want.json"
else
  failed0=1; echo "data sources: FAIL the $STAGE stage's aws provider computes other values than tools/tfcheck/policies/want.json:"
  sed 's/^/    /' "$work/outputs.diff" 2>/dev/null | head -100
fi
if "$TFCHECK" --validators "$work/validators.txt"; then
  validators=1
else
  failed0=1
fi
if [ "$FULL" = 1 ]; then   # the real providers' diagnostics are the schema provider's
  nvalidators=2
  if TFCHECK_FULL=0 "$TFCHECK" --validators "$work/validators-schemaprov.txt" &&
     diff -u "$work/validators.txt" "$work/validators-schemaprov.txt" > "$work/validators.diff"; then
    validators=$((validators + 1)); echo "validators: ok   the schema provider's diagnostics are the real providers'"
  else
    failed0=1; echo "validators: FAIL the schema provider's diagnostics differ from the real providers' (- real, + schema provider):"
    sed 's/^/    /' "$work/validators.diff" 2>/dev/null | head -100
  fi
fi

# 1. The good configurations.
validate=() fmtonly=()
while IFS= read -r d; do
  # provider sources other than aws and random, module sources other than ./ and ../
  if sed -n 's/^\s*source\s*=\s*"\([^"]*\)".*/\1/p' "$d"/*.tf |
    grep -vE '^(\.\.?/|(registry\.terraform\.io/)?hashicorp/(aws|random)$)' >/dev/null; then
    fmtonly+=("$d")
  else
    validate+=("$d")
  fi
done < <(find infra/terraform test/terraform/fixtures -name .terraform -prune -o -name '*.tf' -printf '%h\n' | sort -u)

echo "terraform: validating ${#validate[@]} configurations, format-checking ${#fmtonly[@]}"
"$TFCHECK" "${validate[@]}"
rc=$?
if [ $rc != 0 ]; then failed=1; fi
if [ ${#fmtonly[@]} -gt 0 ]; then
  "$TFCHECK" --fmt-only "${fmtonly[@]}" || failed=1
fi
if [ $rc = 2 ]; then
  echo "terraform: FAIL (tfcheck could not build terraform or the providers)"
  exit 1
fi
if [ $failed != 0 ]; then   # plans and broken copies of failing configurations prove nothing
  echo
  echo "terraform: FAIL (the configurations above do not pass; plans and negative tests skipped)"
  exit 1
fi

# 2. Plans of the example, offline (fake credentials, a fresh state, a stand-in zip): what
# validate leaves unknown evaluates, up to where apply would call AWS.
echo stand-in > "$work/lambda.zip"   # plan only hashes it
plans=0
for args in "" "-var enable_rest_api=true -var authorization_type=NONE -var allow_unauthenticated=true -var architecture=x86_64"; do
  if TFCHECK_PLAN_ARGS="-var zip_path=$work/lambda.zip $args" "$TFCHECK" --plan infra/terraform/examples/lambda |
    sed "1s|\$| ${args:-(defaults)}|" | grep -v '^tfcheck: [0-9]* passed'; then
    plans=$((plans + 1))
  else
    failed=1
  fi
done

# 3. The mock-provider tests (tofu test, offline).
tests=0
if "$TFCHECK" --test "$MODULE" | grep -v '^tfcheck: [0-9]* passed'; then
  tests=1
else
  failed=1
fi

# 4. The negative tests: each broken configuration must make tfcheck exit 1 with the expected
# error text (a fixed string) in its output. They run two at a time (the machine's two cores;
# each tfcheck has its own work directory, and the builds are done), and are judged in order.
caught=0 cases=0
neg_names=() neg_expected=() neg_opts=()
check_broken() { # check_broken NAME DIR EXPECTED [TFCHECK_OPTION]: starts it
  local name=$1 dir=$2 n=${#neg_names[@]}
  neg_names+=("$1") neg_expected+=("$3") neg_opts+=("${4:-}")
  while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n; done
  ("$TFCHECK" ${4:+"$4"} "$dir" > "$work/neg-$n.out" 2>&1; echo $? > "$work/neg-$n.rc") &
}
judge_broken() { # judges the cases started, in order
  local i name expected out rc
  wait
  for i in "${!neg_names[@]}"; do
    name=${neg_names[$i]} expected=${neg_expected[$i]}
    cases=$((cases + 1))
    out=$(cat "$work/neg-$i.out"); rc=$(cat "$work/neg-$i.rc")
    if [ "$rc" = 1 ] && grep -qF -- "$expected" <<<"$out"; then
      caught=$((caught + 1))
      echo "negative: ok   $name: rejected with \"$expected\""
    else
      failed=1
      echo "negative: FAIL $name: want tfcheck ${neg_opts[$i]} to exit 1 with \"$expected\"; it exited $rc:"
      sed 's/^/    /' <<<"$out"
    fi
  done
  neg_names=() neg_expected=() neg_opts=()
}
broken() { # broken NAME FILE SED_EXPR EXPECTED [TFCHECK_OPTION]
  local name=$1 file=$2 expr=$3 expected=$4 dir=$work/$1
  mkdir -p "$dir"
  cp -r "$MODULE" "$dir/mcp-lambda"
  sed -i "$expr" "$dir/mcp-lambda/$file"
  if cmp -s "$MODULE/$file" "$dir/mcp-lambda/$file"; then
    cases=$((cases + 1)) failed=1
    echo "negative: FAIL $name: the edit ($expr) changed nothing in $MODULE/$file"
    return
  fi
  check_broken "$name" "$dir/mcp-lambda" "$expected" ${5:+"$5"}
}

# Edits that keep the copies formatted (the = column unchanged), so that each failure is the
# step's under test. A misspelt attribute fails validate; a wrong invoke mode, now an expression of
# var.streaming that validate leaves unknown, fails the provider's validator under the mocks.
broken misspelt-attribute function.tf 's/^\(\s*\)memory_size\(\s*\)= /\1memroy_size\2= /' \
  'An argument named "memroy_size" is not expected here.'
broken wrong-invoke-mode function.tf 's/invoke_mode = var.streaming ? "RESPONSE_STREAM" :/invoke_mode = var.streaming ? "RESPONSE_STREAMED" :/' \
  'expected invoke_mode to be one of ["BUFFERED" "RESPONSE_STREAM"], got RESPONSE_STREAMED' --test

# Broken wiring that validates, caught by the mock tests.
broken invoke-mode-ignores-streaming function.tf 's/invoke_mode = var.streaming ? "RESPONSE_STREAM" : "BUFFERED"/invoke_mode = var.streaming ? "BUFFERED" : "RESPONSE_STREAM"/' \
  'invoke_mode = BUFFERED, want RESPONSE_STREAM (MCPFN_STREAMING=1)' --test
broken streaming-env-ignores-streaming function.tf 's/MCPFN_STREAMING       = var.streaming ? "1" : "0"/MCPFN_STREAMING       = var.streaming ? "1" : "1"/' \
  'invoke_mode = BUFFERED, MCPFN_STREAMING = 1; want BUFFERED and 0' --test
broken wrong-iam-resource iam.tf 's/resources = \[local.secret_arn\]/resources = [local.table_arn]/' \
  '~ StateKeys    = [' --test
broken misspelt-env-var function.tf 's/MCPFN_KEYS_SECRET_ID  = /MCPFN_KEY_SECRET_ID   = /' \
  '- MCPFN_KEY_SECRET_ID   = ' --test
broken wrong-ttl-attribute sessions.tf 's/attribute_name = "ttl"/attribute_name = "exp"/' \
  'time to live on exp, want ttl' --test
broken tasks-runner-not-lambda function.tf 's/MCPFN_TASK_RUNNER        = var.tasks ? "lambda" : "none"/MCPFN_TASK_RUNNER        = var.tasks ? "none" : "none"/' \
  'MCPFN_TASK_RUNNER = none, want lambda by default' --test
broken tasks-off-by-default variables.tf '/^variable "tasks" {/,/^}/ s/default     = true/default     = false/' \
  'MCPFN_TASK_RUNNER = none, want lambda by default' --test
broken no-tasks-runner-unset function.tf 's/var.tasks ? "lambda" : "none"/var.tasks ? "lambda" : null/' \
  'MCPFN_TASK_RUNNER = (unset) with tasks = false, want none' --test
broken misspelt-claim-timeout function.tf 's/MCPFN_TASK_CLAIM_TIMEOUT = var.task_claim_timeout/MCPFN_TASKS_CLAIM_TIMOUT = var.task_claim_timeout/' \
  'MCPFN_TASK_CLAIM_TIMEOUT = (unset), want 900' --test
broken claim-timeout-unbounded variables.tf 's/ \&\& var.task_claim_timeout <= 21600 \&\& / \&\& /' \
  'Missing expected failure' --test
broken self-invoke-any-function iam.tf 's/resources = \[aws_lambda_function.this.arn\]/resources = ["*"]/' \
  'SelfInvoke must name the function'"'"'s own unqualified ARN' --test
broken self-invoke-without-tasks iam.tf 's/count = var.tasks ? 1 : 0/count = 1/' \
  'without tasks the role must not be able to invoke the function' --test
broken public-without-auth-allowed function.tf 's/condition     = var.authorization_type == "AWS_IAM" || var.auth != null || var.allow_unauthenticated/condition     = var.authorization_type != ""/' \
  'Missing expected failure' --test

# caller NAME EXPECTED < MAIN_TF: a root module (its main.tf from stdin) calling a copy of the
# module as ../mcp-lambda, which tfcheck must refuse with EXPECTED.
caller() {
  mkdir -p "$work/$1/root"
  cp -r "$MODULE" "$work/$1/mcp-lambda"
  cat > "$work/$1/root/main.tf"
  check_broken "$1" "$work/$1/root" "$2"
}

# A caller passing a value the module's own validation refuses (amd64 is GOARCH, not Lambda's name).
caller bad-architecture 'architecture must be arm64 or x86_64.' <<'EOF'
module "mcp" {
  source       = "../mcp-lambda"
  name         = "bad-architecture"
  zip_path     = "lambda-amd64.zip"
  architecture = "amd64"
}
EOF

# A task claim timeout past the longest Lambda keeps an asynchronous event.
caller bad-claim-timeout 'task_claim_timeout must be null or a whole number of seconds from 1 to 21600' <<'EOF'
module "mcp" {
  source             = "../mcp-lambda"
  name               = "bad-claim-timeout"
  zip_path           = "lambda.zip"
  task_claim_timeout = 86400
}
EOF

judge_broken

# A public URL without auth, as a copy-paste of authorization_type = "NONE" would make it: plan
# refuses it (allow_unauthenticated is the explicit opt-in).
cases=$((cases + 1))
out=$(TFCHECK_PLAN_ARGS="-var zip_path=$work/lambda.zip -var authorization_type=NONE" "$TFCHECK" --plan infra/terraform/examples/lambda 2>&1)
if [ $? = 1 ] && grep -qF 'Resource precondition failed' <<<"$out" && grep -qF 'var.authorization_type is "NONE"' <<<"$out"; then
  caught=$((caught + 1))
  echo "negative: ok   public-without-auth: plan refused it"
else
  failed=1
  echo "negative: FAIL public-without-auth: want plan to refuse authorization_type=NONE without auth:"
  sed 's/^/    /' <<<"$out"
fi

# 5. examples/own-function in a copy whose module source is this checkout's module.
OWN=infra/terraform/examples/own-function
GIT_SOURCE='git::https://github.com/mcpfn/mcpfn.git//infra/terraform/modules/mcp-lambda?ref=v0.1.0'
# localize SRC DEST: copies SRC to DEST with the one line `source = "$GIT_SOURCE"` pointing at
# this checkout's modules/mcp-lambda (a relative path, which tfcheck copies along). It refuses
# (exit 1, saying why) a copy in which that line is not there exactly once, in which another
# git:: source remains, or which differs from SRC in any other line.
localize() {
  local src=$1 dest=$2 rel n sub f
  rm -rf "$dest"; mkdir -p "$dest"
  cp -r "$src/." "$dest/"; rm -rf "$dest/.terraform" "$dest/.terraform.lock.hcl"
  n=$(cat "$dest"/*.tf | grep -cxF "  source = \"$GIT_SOURCE\"")
  [ "$n" = 1 ] || { echo "localize: $src: want exactly one line 'source = \"$GIT_SOURCE\"', found $n"; return 1; }
  sub=${GIT_SOURCE#git::https://github.com/mcpfn/mcpfn.git//}; sub=${sub%%\?ref=*}   # the module's directory
  rel=$(realpath -m --relative-to="$dest" "$ROOT/$sub")
  [ -d "$dest/$rel" ] || { echo "localize: $rel (from the git source) is not a directory"; return 1; }
  for f in "$dest"/*.tf; do
    awk -v old="  source = \"$GIT_SOURCE\"" -v new="  source = \"$rel\"" '$0 == old { print new; next } { print }' "$f" > "$f.new"
    mv "$f.new" "$f"
  done
  if grep -n 'git::' "$dest"/*.tf; then echo "localize: a git source remains"; return 1; fi
  n=$(diff -r "$src" "$dest" --exclude=.terraform --exclude=.terraform.lock.hcl | grep -c '^[<>]')
  [ "$n" = 2 ] || { echo "localize: want one line changed, the diff has $n lines"; return 1; }
}
own=0
rewrites=0
# The rewrite itself: it works on the example, and refuses sources it was not written for.
if localize "$OWN" "$work/own/own-function"; then
  rewrites=$((rewrites + 1)); echo "rewrite: ok   $OWN: one line, source = \"$(sed -n 's/^  source = "\(\.\.[^"]*\)"$/\1/p' "$work/own/own-function/main.tf")\""
else
  failed=1; echo "rewrite: FAIL $OWN"
fi
refused() { # refused NAME SED_ARGS...: a copy of the example edited by sed, which localize must refuse
  local name=$1 out; shift
  mkdir -p "$work/rw-$name"; cp -r "$OWN/." "$work/rw-$name/"; sed -i "$@" "$work/rw-$name/main.tf"
  if out=$(localize "$work/rw-$name" "$work/rw-$name-out"); then
    failed=1; echo "rewrite: FAIL $name: the rewrite accepted a source it must refuse"
  else
    rewrites=$((rewrites + 1)); echo "rewrite: ok   $name: refused ($out)"
  fi
}
refused other-ref 's/?ref=v0.1.0/?ref=v0.0.9/'
refused other-repository 's|github.com/mcpfn/mcpfn.git|github.com/other/mcpfn.git|'
refused two-sources '$r '"$OWN/main.tf"
if [ -d "$work/own/own-function" ] && grep -q '^  source = "\.\.' "$work/own/own-function/main.tf"; then
  if "$TFCHECK" "$work/own/own-function" | grep -v '^tfcheck: [0-9]* passed' &&
     TFCHECK_PLAN_ARGS="-var zip_path=$work/lambda.zip" "$TFCHECK" --plan "$work/own/own-function" | grep -v '^tfcheck: [0-9]* passed' &&
     "$TFCHECK" --test "$work/own/own-function" | grep -v '^tfcheck: [0-9]* passed'; then
    own=1
  else
    failed=1
  fi
fi

[ "$failed0" = 0 ] || failed=1
echo
summary="$STAGE stage: $schemas/2 schemas as committed, $validators/$nvalidators validator checks, $rendered/1 data source renderings, ${#validate[@]} validated, ${#fmtonly[@]} fmt-only, $plans/2 plans, $tests/1 mock test suites, $caught/$cases broken configurations rejected, $rewrites/4 rewrite checks, $own/1 own-function"
if [ $failed = 0 ]; then
  echo "terraform: PASS ($summary)"
else
  echo "terraform: FAIL ($summary; see above)"
fi
exit $failed
