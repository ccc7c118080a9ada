package secretsmanager_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/store/secretsmanager"
)

// TestNilLoggerIsDefault checks that Keys built without a Logger warn
// through slog.Default() rather than nowhere: an AWSPENDING version without
// a valid key is skipped with a warning. It replaces the default logger, so
// it is not parallel.
func TestNilLoggerIsDefault(t *testing.T) {
	logs := mcptest.DefaultLogs(t)

	srv := newSMServer(t)
	cur, pend := newVersionID(), newVersionID()
	s1, _ := newValue(t)
	srv.put(secretName, cur, s1)
	srv.put(secretName, pend, `{"key":"short"}`, "AWSPENDING")
	k, err := secretsmanager.New(srv.client(), secretName, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Keys(context.Background()); err != nil {
		t.Fatal(err)
	}
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, pend) {
		t.Errorf("Keys without a Logger did not warn through slog.Default():\n%q", l)
	}
}
