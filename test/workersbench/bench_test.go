package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/internal/testenv"
)

// TestQuick runs the harness in -quick mode, so that it keeps working:
// every server answers, and the report has its rows and the size profile.
// The numbers are not checked (the targets are reported, never asserted).
func TestQuick(t *testing.T) {
	testenv.Workerd.SkipShort(t)
	var out, log bytes.Buffer
	cfg := quickConfig
	cfg.Rounds = 1 // one round shows every server works; -quick itself runs two
	err := run(cfg, &out, &log)
	var missing errMissing
	if errors.As(err, &missing) {
		testenv.Workerd.Missing(t, err.Error())
	}
	if err != nil {
		t.Fatalf("%v\nprogress:\n%s", err, log.String())
	}
	report := out.String()
	for _, want := range []string{"| A workers-lazy |", "| B workers-eager |", "| C native |", "| D ts-anchor |",
		"### Where the wasm goes", "| 1 | "} {
		if !strings.Contains(report, want) {
			t.Errorf("the report has no %q:\n%s", want, report)
		}
	}
	t.Logf("report:\n%s", report)
}
