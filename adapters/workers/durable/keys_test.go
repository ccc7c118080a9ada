package durable_test

import (
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/adapters/workers/durable"
)

func TestParseKeys(t *testing.T) {
	a := "c2VjcmV0LWtleS1vZi10aGUtd29ya2Vycy10ZXN0cy0wMQ=="
	b := "YW5vdGhlci1rZXktb2YtdGhlLXdvcmtlcnMtdGVzdHMtMDI="
	keys, err := durable.ParseKeys("K", b+", "+a)
	if err != nil || len(keys) != 2 {
		t.Fatalf("two keys: %v, %v", keys, err)
	}
	again, _ := durable.ParseKeys("K", a)
	if keys[1].ID != again[0].ID || keys[0].ID == keys[1].ID || !strings.HasPrefix(keys[0].ID, "env-") {
		t.Errorf("ids: %s %s (alone %s): want derived from each key, equal for the same key", keys[0].ID, keys[1].ID, again[0].ID)
	}
	for secret, want := range map[string]string{
		"":            "not set",
		"not base64!": "not standard base64",
		"c2hvcnQ=":    "at least",
		a + "," + a:   "listed twice",
		b + ",,":      "key 2",
	} {
		if _, err := durable.ParseKeys("K", secret); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseKeys(%q): %v, want an error saying %q", secret, err, want)
		}
	}
}
