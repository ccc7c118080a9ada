package memory_test

import (
	"context"
	"fmt"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/store/memory"
)

func ExampleKeys() {
	keys, err := memory.NewKeys(core.NewRandomKey("2026-11"))
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := core.NewServer(core.Implementation{Name: "x", Version: "1"}, &core.ServerOptions{Keys: keys, SessionStore: &memory.Store{}})
	_ = srv

	// Rotate: the new key signs from now on; state sealed with the old one
	// still verifies until the old key is removed (after the state TTL).
	keys.Put(core.NewRandomKey("2026-12"))
	ks, _ := keys.Keys(context.Background())
	fmt.Println(ks[0].ID, ks[1].ID)
	keys.Remove("2026-11")
	ks, _ = keys.Keys(context.Background())
	fmt.Println(len(ks), ks[0].ID)
	// Output:
	// 2026-12 2026-11
	// 1 2026-12
}
