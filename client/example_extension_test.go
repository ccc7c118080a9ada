package client_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
)

// A client that declares a vendor extension reads the server's settings
// and sends the extension's request.
func ExampleConn_Request() {
	srv := core.NewServer(core.Implementation{Name: "search", Version: "1"}, nil)
	srv.AddExtension(core.Extension{ID: "com.example/search", Settings: map[string]any{"maxResults": 10}})
	srv.AddMethod("com.example/search", "search/query", core.MethodFunc(func(ctx context.Context, r *core.Request, q struct {
		Query string `json:"query"`
	}) (map[string]any, error) {
		return map[string]any{"hits": []string{q.Query + " (1)"}}, nil
	}), &core.MethodOptions{NameParam: "query"})
	ts := httptest.NewServer(nethttp.Handler(srv))
	defer ts.Close()
	ctx := context.Background()

	c, err := client.Connect(ctx, ts.URL+"/mcp", &client.Options{
		Extensions: map[string]map[string]any{"com.example/search": {"lang": "en"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	settings, ok := c.ServerExtension("com.example/search")
	fmt.Println(ok, settings)

	var res struct {
		Hits []string `json:"hits"`
	}
	err = c.Request(ctx, "search/query", map[string]any{"query": "mcp"}, &res, &client.CallOptions{Name: "mcp"})
	fmt.Println(res.Hits, err)
	// Output:
	// true map[maxResults:10]
	// [mcp (1)] <nil>
}
