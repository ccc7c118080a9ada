package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/mcp"
)

const extSearch = "com.example/search"

// searchServer sets up a server of a vendor extension whose method
// search/query mirrors params.query in Mcp-Name and answers with what it
// received: the query, the settings the client declared, and the routing
// headers.
func searchServer(s *core.Server) {
	s.AddExtension(core.Extension{ID: extSearch, Settings: map[string]any{"maxLimit": 50}})
	s.AddMethod(extSearch, "search/query", core.MethodFunc(func(ctx context.Context, r *core.Request, p struct {
		Query string `json:"query"`
	}) (map[string]any, error) {
		settings, _ := r.Extension(extSearch)
		return map[string]any{"query": p.Query, "settings": settings,
			"method": r.Header.Get(core.HeaderMethod), "name": r.Header.Get(core.HeaderName)}, nil
	}), &core.MethodOptions{NameParam: "query"})
}

// TestExtensions: through adapters/nethttp, in both eras, a client that
// declares an extension with settings reads the server's, sends the
// extension's request with the routing headers and gets its result; one
// that does not declare it gets -32021; an unknown method is -32601.
func TestExtensions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, mode := range []core.Mode{core.ModeModern, core.ModeLegacy} {
		t.Run(mode.String(), func(t *testing.T) {
			url, _ := newServer(t, &core.ServerOptions{Mode: mode}, searchServer)
			declared := map[string]map[string]any{extSearch: {"lang": "en"}}
			c := connect(t, ctx, url, &client.Options{Extensions: declared})
			declared[extSearch]["lang"] = "changed" // the Client kept its own copy
			if got, ok := c.ServerExtension(extSearch); !ok || !reflect.DeepEqual(got, map[string]any{"maxLimit": float64(50)}) {
				t.Errorf("ServerExtension = %v, %v", got, ok)
			}
			if _, ok := c.ServerExtension(mcp.ExtensionTasks); ok {
				t.Errorf("the server advertises tasks without a task tool: %v", c.ServerExtensions())
			}
			var res struct {
				Query    string         `json:"query"`
				Settings map[string]any `json:"settings"`
				Method   string         `json:"method"`
				Name     string         `json:"name"`
			}
			if err := c.Request(ctx, "search/query", map[string]any{"query": "héllo"}, &res, &client.CallOptions{Name: "héllo"}); err != nil {
				t.Fatal(err)
			}
			wantMethod, wantName := "search/query", "=?base64?aMOpbGxv?="
			if mode == core.ModeLegacy {
				wantMethod, wantName = "", "" // no routing headers before 2026-07-28
			}
			if res.Query != "héllo" || !reflect.DeepEqual(res.Settings, map[string]any{"lang": "en"}) || res.Method != wantMethod || res.Name != wantName {
				t.Errorf("result = %+v", res)
			}

			bare := connect(t, ctx, url, nil)
			err := bare.Request(ctx, "search/query", map[string]any{"query": "q"}, nil, &client.CallOptions{Name: "q"})
			var e *mcp.Error
			if !errors.Is(err, mcp.ErrMissingCapability) || !errors.As(err, &e) || e.RequiredCapabilities() == nil ||
				e.RequiredCapabilities().Extensions[extSearch] == nil {
				t.Errorf("undeclared: %v", err)
			}
			err = c.Request(ctx, "search/none", nil, nil, nil)
			if !errors.As(err, &e) || e.Code != mcp.CodeMethodNotFound {
				t.Errorf("unknown method: %v", err)
			}
			var raw json.RawMessage
			if err := c.Request(ctx, "search/query", struct{ Query int }{1}, &raw, &client.CallOptions{Name: "1"}); !errors.As(err, &e) || e.Code != mcp.CodeInvalidParams {
				t.Errorf("bad params: %v", err)
			}
		})
	}
}
