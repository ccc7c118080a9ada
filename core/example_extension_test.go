package core_test

import (
	"context"
	"fmt"

	"github.com/mcpfn/mcpfn/core"
)

// A vendor extension: advertised with its settings, one method whose
// params.query is mirrored in Mcp-Name, answered only to clients that
// declare the extension.
func ExampleServer_AddMethod() {
	srv := core.NewServer(core.Implementation{Name: "search", Version: "1"}, nil)
	srv.AddExtension(core.Extension{ID: "com.example/search", Settings: map[string]any{"maxResults": 10}})
	type query struct {
		Query string `json:"query"`
	}
	srv.AddMethod("com.example/search", "search/query", core.MethodFunc(func(ctx context.Context, r *core.Request, q query) (map[string]any, error) {
		settings, _ := r.Extension("com.example/search") // what the client declared
		return map[string]any{"hits": []string{q.Query + " (1)"}, "lang": settings["lang"]}, nil
	}), &core.MethodOptions{NameParam: "query"})

	res := post(srv, "server/discover", "", nil, nil)
	fmt.Println(res["capabilities"].(map[string]any)["extensions"])

	declares := map[string]any{"extensions": map[string]any{"com.example/search": map[string]any{"lang": "en"}}}
	res = post(srv, "search/query", "mcp", map[string]any{"query": "mcp"}, declares)
	fmt.Println(res["hits"], res["lang"], res["resultType"])

	res = post(srv, "search/query", "mcp", map[string]any{"query": "mcp"}, nil)
	fmt.Println(res["error"].(map[string]any)["code"], res["error"].(map[string]any)["data"])
	// Output:
	// map[com.example/search:map[maxResults:10]]
	// [mcp (1)] en complete
	// -32021 map[requiredCapabilities:map[extensions:map[com.example/search:map[]]]]
}
