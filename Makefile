# mcpfn make targets. `make test` is the whole test suite (CI runs it).
REV ?= 2026-07-28
ADAPTER ?= nethttp
GO ?= go

.PHONY: test unit conformance conformance-all

# conformance: one suite run against examples/everything behind ADAPTER.
conformance:
	@test/conformance/run.sh --rev $(REV) --adapter $(ADAPTER)
