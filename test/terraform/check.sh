#!/usr/bin/env bash
# check.sh: the Terraform stage of test/all.sh.
#
#  1. tools/tfcheck/tfcheck.sh (fmt -check, init against locally built providers, validate) on
#     every directory of .tf files under infra/terraform and test/terraform/fixtures; those that
#     need a provider not built offline (hashicorp/google) get fmt -check only.
#  2. terraform plan of examples/lambda, offline (fake credentials, fresh state, stand-in zip),
#     with the defaults and with the REST API, a public URL and x86_64.
#  3. Negative tests: broken copies of modules/mcp-lambda must fail validate, each with its own
#     error (a misspelt attribute, a wrong invoke_mode, a value the module's validation refuses).
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

# 1. The good configurations.
validate=() fmtonly=()
while IFS= read -r d; do
  # provider sources other than aws and random (module sources start with ./ or ../)
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
for args in "" "-var enable_rest_api=true -var authorization_type=NONE -var architecture=x86_64"; do
  if TFCHECK_PLAN_ARGS="-var zip_path=$work/lambda.zip $args" "$TFCHECK" --plan infra/terraform/examples/lambda |
    sed "1s|\$| ${args:-(defaults)}|" | grep -v '^tfcheck: [0-9]* passed'; then
    plans=$((plans + 1))
  else
    failed=1
  fi
done

# 3. The negative tests: each broken configuration must make tfcheck exit 1 with the expected
# error text (a fixed string) in its output.
caught=0 cases=0
check_broken() { # check_broken NAME DIR EXPECTED
  local name=$1 dir=$2 expected=$3 out rc
  cases=$((cases + 1))
  out=$("$TFCHECK" "$dir" 2>&1)
  rc=$?
  if [ $rc = 1 ] && grep -qF -- "$expected" <<<"$out"; then
    caught=$((caught + 1))
    echo "negative: ok   $name: rejected with \"$expected\""
  else
    failed=1
    echo "negative: FAIL $name: want tfcheck to exit 1 with \"$expected\"; it exited $rc:"
    sed 's/^/    /' <<<"$out"
  fi
}
broken() { # broken NAME FILE SED_EXPR EXPECTED
  local name=$1 file=$2 expr=$3 expected=$4 dir=$work/$1
  mkdir -p "$dir"
  cp -r "$MODULE" "$dir/mcp-lambda"
  sed -i "$expr" "$dir/mcp-lambda/$file"
  if cmp -s "$MODULE/$file" "$dir/mcp-lambda/$file"; then
    cases=$((cases + 1)) failed=1
    echo "negative: FAIL $name: the edit ($expr) changed nothing in $MODULE/$file"
    return
  fi
  check_broken "$name" "$dir/mcp-lambda" "$expected"
}

# Same-length edits, so that the copies stay formatted and the failure is validate's.
broken misspelt-attribute function.tf 's/^\(\s*\)memory_size\(\s*\)= /\1memroy_size\2= /' \
  'An argument named "memroy_size" is not expected here.'
broken wrong-invoke-mode function.tf 's/invoke_mode\(\s*\)= "RESPONSE_STREAM"/invoke_mode\1= "RESPONSE_STREAMED"/' \
  'expected invoke_mode to be one of ["BUFFERED" "RESPONSE_STREAM"], got RESPONSE_STREAMED'

# A caller passing a value the module's own validation refuses (amd64 is GOARCH, not Lambda's name).
mkdir -p "$work/bad-architecture/root"
cp -r "$MODULE" "$work/bad-architecture/mcp-lambda"
cat > "$work/bad-architecture/root/main.tf" <<'EOF'
module "mcp" {
  source       = "../mcp-lambda"
  name         = "bad-architecture"
  zip_path     = "lambda-amd64.zip"
  architecture = "amd64"
}
EOF
check_broken bad-architecture "$work/bad-architecture/root" 'architecture must be arm64 or x86_64.'

echo
if [ $failed = 0 ]; then
  echo "terraform: PASS (${#validate[@]} validated, ${#fmtonly[@]} fmt-only, $plans/2 plans, $caught/$cases broken configurations rejected)"
else
  echo "terraform: FAIL (${#validate[@]} validated, ${#fmtonly[@]} fmt-only, $plans/2 plans, $caught/$cases broken configurations rejected; see above)"
fi
exit $failed
