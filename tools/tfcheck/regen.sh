#!/usr/bin/env bash
# regen.sh: rewrites the schema provider's committed files from the real providers (built as the
# full stage builds them, cached): schemaprov/schemas/aws.json and random.json (the schemas of
# the types the .tf files under infra/terraform and test/terraform use) and policies/want.json
# (the data sources of policies/main.tf), then checks schemaprov/schemas/validators.txt, which is
# written by hand from the providers' sources, against the real providers. Review the diff, then
# run `make terraform-full`.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
export TFCHECK_FULL=1
tools/tfcheck/tfcheck.sh --schemas tools/tfcheck/schemaprov/schemas infra/terraform test/terraform
tools/tfcheck/tfcheck.sh --outputs tools/tfcheck/policies/want.json tools/tfcheck/policies
out=$(mktemp); trap 'rm -f "$out"' EXIT
tools/tfcheck/tfcheck.sh --validators "$out"
git status --short tools/tfcheck/schemaprov/schemas tools/tfcheck/policies
