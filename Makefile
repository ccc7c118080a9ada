# mcpfn make targets.
#
#   make check                     the quick tier: lint + go test -race -short, every module
#   make test                      every test: lint, unit (-race), conformance, interop, ...
#   make conformance REV=2026-07-28 ADAPTER=nethttp
#   make conformance ADAPTER=replicas   both revisions through three replicas
#   make conformance-all           both revisions, every adapter
#   make conformance-client REV=2026-07-28,2025-11-25   the client scenarios (package client)
#   make lambda-zip                build examples/lambda into deployable zips
#   make terraform                 the Terraform stage (fast: OpenTofu, the tfcheck schema provider)
#   make terraform-full            the Terraform stage with terraform 1.5.7 and the real providers
#                                  built from source (~20 min cold), checking the schema provider
#
# The test targets install what they need (Node 22 and the conformance suite
# from the npm registry, dynalite, the Lambda runtime interface emulator, a
# locally built OpenTofu and the tfcheck schema provider; terraform-full: terraform
# and the real AWS and random providers) into ~/.cache.
REV ?=
ADAPTER ?= nethttp
comma := ,
# The revisions a conformance run covers when REV is not given: 2026-07-28,
# except for replicas, whose rolling restarts and key rotation are timed to
# fall inside both suites run one after the other (test/replicas/README.md).
CONFORMANCE_REV = $(or $(REV),$(if $(filter replicas,$(ADAPTER)),2025-11-25$(comma)2026-07-28,2026-07-28))
GO ?= go

.PHONY: test check lint unit conformance conformance-all conformance-client lambda-zip terraform terraform-full

# lambda-zip: the deployable zips of examples/lambda (provided.al2023
# bootstrap, arm64 and amd64) in examples/lambda/build/, written by
# `mcpfn package lambda` (reproducible: the same sources give the same bytes).
lambda-zip:
	@examples/lambda/build.sh

test:
	@test/all.sh

# check: lint, then the unit tests of every module with -race -short (no
# emulators, no Node); see CONTRIBUTING.md.
check:
	@test/check.sh

# lint: gofmt, and for every module (test/modules.sh) a tidy go.mod and go vet.
lint:
	@test/lint.sh

# unit: the unit tests of every module (the "work" pattern of go.work),
# without starting emulators (test/unit.sh starts them).
unit:
	$(GO) test -race -count=1 work

# conformance: one suite run against examples/everything behind ADAPTER.
# REV may list several revisions (REV=2025-11-25,2026-07-28): they run one
# after the other against the same server process. Without REV: 2026-07-28,
# and both revisions for ADAPTER=replicas (CONFORMANCE_REV).
conformance:
	@test/conformance/run.sh --rev $(CONFORMANCE_REV) --adapter $(ADAPTER)

conformance-all:
	@test/conformance/all.sh

# conformance-client: the suite's client scenarios against
# test/conformance/client, scored per test/conformance/expected/client-REV.yaml.
conformance-client:
	@test/conformance/run.sh --leg client --rev $(or $(REV),2026-07-28)

# terraform: test/terraform/check.sh, the stage make test runs in the
# background; terraform-full: the same checks with terraform 1.5.7 and the
# real providers, and the committed schemas and validators of the schema
# provider compared with them (tools/tfcheck/README.md).
terraform:
	@test/terraform/check.sh

terraform-full:
	@TFCHECK_FULL=1 test/terraform/check.sh
