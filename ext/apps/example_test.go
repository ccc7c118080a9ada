package apps_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/ext/apps"
	"github.com/mcpfn/mcpfn/mcp"
)

const dashboard = `<!DOCTYPE html><html><body><div id="app"></div></body></html>`

// An app: a view and a tool that points to it. The tool answers in text
// for clients that do not render apps.
func Example() {
	srv := core.NewServer(core.Implementation{Name: "weather", Version: "1"}, nil)
	yes := true
	apps.AddResource(srv, apps.UIResource{
		URI: "ui://weather/dashboard.html", Name: "weather_dashboard", HTML: dashboard,
		UI: &apps.ResourceUI{
			CSP:           &apps.CSP{ConnectDomains: []string{"https://api.weather.example"}},
			Permissions:   &apps.Permissions{Geolocation: true},
			PrefersBorder: &yes,
		},
	})
	type in struct {
		Location string `json:"location"`
	}
	apps.AddTool(srv, &core.Tool{Name: "get_weather", Description: "Current weather, with a dashboard"},
		apps.ToolUI{ResourceURI: "ui://weather/dashboard.html"},
		func(ctx context.Context, req *core.CallToolRequest, a in) (*core.CallToolResult, error) {
			text := "Sunny in " + a.Location
			if apps.ClientSupportsUI(req.Request) {
				text += " (see the dashboard)"
			}
			return &core.CallToolResult{Content: []core.Content{&core.TextContent{Text: text}},
				StructuredContent: map[string]any{"location": a.Location, "conditions": "sunny"}}, nil
		})
	ts := httptest.NewServer(nethttp.Handler(srv))
	defer ts.Close()
	ctx := context.Background()

	// A host declares the extension with the MIME types it renders.
	c, err := client.Connect(ctx, ts.URL+"/mcp", &client.Options{Extensions: map[string]map[string]any{
		apps.ExtensionID: {"mimeTypes": []string{apps.MIMEType}},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	_, ok := c.ServerExtension(apps.ExtensionID)
	fmt.Println("advertised:", ok)
	tools, _ := c.ListTools(ctx, nil)
	ui, _ := json.Marshal(tools[0].Meta["ui"])
	fmt.Println(tools[0].Name, string(ui))
	rr, _ := c.ReadResource(ctx, "ui://weather/dashboard.html", nil)
	meta, _ := json.Marshal(rr.Contents[0].Meta["ui"])
	fmt.Println(rr.Contents[0].MIMEType, string(meta))
	res, _ := c.CallTool(ctx, "get_weather", map[string]any{"location": "Paris"}, nil)
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// advertised: true
	// get_weather {"resourceUri":"ui://weather/dashboard.html"}
	// text/html;profile=mcp-app {"csp":{"connectDomains":["https://api.weather.example"]},"permissions":{"geolocation":{}},"prefersBorder":true}
	// Sunny in Paris (see the dashboard)
}
