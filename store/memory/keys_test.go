package memory_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/store/memory"
)

// TestKeysRefuseInvalid checks that NewKeys and Put refuse every key a
// server could not seal with (core.Key.Validate): a short secret, an id
// that is empty, too long or has other characters. A refused Put leaves the
// list as it was.
func TestKeysRefuseInvalid(t *testing.T) {
	t.Parallel()
	secret := []byte(strings.Repeat("s", core.MinKeyBytes))
	bad := map[string]core.Key{
		"short secret": {ID: "k", Secret: secret[1:]},
		"no id":        {Secret: secret},
		"bad id":       {ID: "bad id!", Secret: secret},
		"dotted id":    {ID: "k.1", Secret: secret},
		"long id":      {ID: strings.Repeat("k", 65), Secret: secret},
	}
	for name, k := range bad {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := memory.NewKeys(k); err == nil || !strings.HasPrefix(err.Error(), "memory: ") {
				t.Errorf("NewKeys(%+v) = %v, want a memory: error", k, err)
			}
			keys, err := memory.NewKeys(core.Key{ID: "good", Secret: secret})
			if err != nil {
				t.Fatal(err)
			}
			if err := keys.Put(k); err == nil {
				t.Errorf("Put(%+v) accepted", k)
			}
			if ks, _ := keys.Keys(context.Background()); len(ks) != 1 || ks[0].ID != "good" {
				t.Errorf("after a refused Put: %v", ks)
			}
		})
	}
}
