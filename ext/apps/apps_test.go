package apps_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/ext/apps"
	"github.com/mcpfn/mcpfn/mcp"
)

const view = "ui://test/view.html"

// serve returns the URL of a server with one app: the view, a tool
// answering "ui" or "text" per ClientSupportsUI, and a view whose Read
// fails.
func serve(t *testing.T, mode core.Mode) string {
	t.Helper()
	s := core.NewServer(core.Implementation{Name: "apps-test", Version: "1"}, &core.ServerOptions{Mode: mode, DisableRequestLog: true})
	border := false
	apps.AddResource(s, apps.UIResource{URI: view, Name: "view", Title: "The view", HTML: "<!DOCTYPE html><p>hi</p>",
		UI: &apps.ResourceUI{CSP: &apps.CSP{ConnectDomains: []string{"https://api.example"}}, Permissions: &apps.Permissions{Camera: true},
			PrefersBorder: &border}, Meta: core.Meta{"com.example/v": 2}})
	apps.AddResource(s, apps.UIResource{URI: "ui://test/broken.html", Name: "broken",
		Read: func(ctx context.Context, req *core.ReadResourceRequest) (string, error) {
			return "", core.InvalidParamsError("Invalid params: broken on purpose")
		}})
	apps.AddTool(s, &core.Tool{Name: "show", Meta: core.Meta{"com.example/x": true}}, apps.ToolUI{ResourceURI: view},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			if apps.ClientSupportsUI(req.Request) {
				return "ui", nil
			}
			return "text", nil
		})
	ts := httptest.NewServer(nethttp.Handler(s))
	t.Cleanup(ts.Close)
	return ts.URL + nethttp.DefaultPath
}

func connect(t *testing.T, url string, ext map[string]map[string]any) *client.Conn {
	t.Helper()
	c, err := client.Connect(context.Background(), url, &client.Options{Extensions: ext})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var host = map[string]map[string]any{apps.ExtensionID: {"mimeTypes": []string{apps.MIMEType}}}

// TestApp: in both eras, the extension is advertised, the tool points to
// the view, the view is listed and read with its type and _meta.ui, and
// ClientSupportsUI follows what the client declared.
func TestApp(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []core.Mode{core.ModeModern, core.ModeLegacy} {
		t.Run(mode.String(), func(t *testing.T) {
			url := serve(t, mode)
			c := connect(t, url, host)
			if s, ok := c.ServerExtension(apps.ExtensionID); !ok || len(s) != 0 {
				t.Errorf("ServerExtension = %v, %v", s, ok)
			}
			tools, err := c.ListTools(ctx, nil)
			if err != nil || len(tools) != 1 {
				t.Fatalf("tools %v, %v", tools, err)
			}
			meta, _ := json.Marshal(tools[0].Meta)
			if want := `{"com.example/x":true,"ui":{"resourceUri":"ui://test/view.html"},"ui/resourceUri":"ui://test/view.html"}`; string(meta) != want {
				t.Errorf("tool _meta = %s, want %s", meta, want)
			}
			res, err := c.ListResources(ctx, nil, nil)
			if err != nil || len(res.Resources) != 2 || res.Resources[0].MIMEType != apps.MIMEType || res.Resources[0].Title != "The view" {
				t.Fatalf("resources %+v, %v", res, err)
			}
			wantUI := `{"csp":{"connectDomains":["https://api.example"]},"permissions":{"camera":{}},"prefersBorder":false}`
			if b, _ := json.Marshal(res.Resources[0].Meta["ui"]); string(b) != wantUI {
				t.Errorf("listed _meta.ui = %s", b)
			}
			rr, err := c.ReadResource(ctx, view, nil)
			if err != nil || len(rr.Contents) != 1 {
				t.Fatalf("read %+v, %v", rr, err)
			}
			ct := rr.Contents[0]
			b, _ := json.Marshal(ct.Meta["ui"])
			if ct.URI != view || ct.MIMEType != apps.MIMEType || ct.Text != "<!DOCTYPE html><p>hi</p>" || string(b) != wantUI || ct.Meta["com.example/v"] != float64(2) {
				t.Errorf("content %+v, _meta.ui %s", ct, b)
			}
			var e *mcp.Error
			if _, err := c.ReadResource(ctx, "ui://test/broken.html", nil); !errors.As(err, &e) || e.Code != mcp.CodeInvalidParams {
				t.Errorf("broken read: %v", err)
			}

			for _, tc := range []struct {
				name string
				ext  map[string]map[string]any
				want string
			}{
				{"host", host, "ui"},
				{"none", nil, "text"},
				{"other type", map[string]map[string]any{apps.ExtensionID: {"mimeTypes": []string{"text/uri-list"}}}, "text"},
				{"no settings", map[string]map[string]any{apps.ExtensionID: nil}, "text"},
			} {
				r, err := connect(t, url, tc.ext).CallTool(ctx, "show", nil, nil)
				if err != nil || len(r.Content) != 1 {
					t.Fatalf("%s: %+v %v", tc.name, r, err)
				}
				if got := r.Content[0].(*mcp.TextContent).Text; got != tc.want {
					t.Errorf("%s: ClientSupportsUI said %q, want %q", tc.name, got, tc.want)
				}
			}
		})
	}
}

func TestClientCapability(t *testing.T) {
	s := core.NewServer(core.Implementation{Name: "x", Version: "1"}, nil)
	var got []any
	apps.AddTool(s, &core.Tool{Name: "caps"}, apps.ToolUI{ResourceURI: view}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
		c, ok := apps.ClientCapability(req.Request)
		got = append(got, c.MIMETypes, ok)
		return "", nil
	})
	ts := httptest.NewServer(nethttp.Handler(s))
	defer ts.Close()
	c := connect(t, ts.URL+nethttp.DefaultPath, map[string]map[string]any{apps.ExtensionID: {"mimeTypes": "not a list"}})
	if _, err := c.CallTool(context.Background(), "caps", nil, nil); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []any{[]string(nil), true}) {
		t.Errorf("ClientCapability of malformed settings = %v", got)
	}
}

func TestPermissionsJSON(t *testing.T) {
	p := apps.Permissions{Camera: true, Microphone: false, Geolocation: true, ClipboardWrite: true}
	b, err := json.Marshal(p)
	if err != nil || string(b) != `{"camera":{},"geolocation":{},"clipboardWrite":{}}` {
		t.Fatalf("%s %v", b, err)
	}
	var q apps.Permissions
	if err := json.Unmarshal([]byte(`{"camera":{},"microphone":true,"clipboardWrite":{}}`), &q); err != nil ||
		q != (apps.Permissions{Camera: true, ClipboardWrite: true}) {
		t.Errorf("%+v %v", q, err)
	}
	if b, _ := json.Marshal(apps.Permissions{}); string(b) != `{}` {
		t.Errorf("none: %s", b)
	}
}

func TestRegistrationPanics(t *testing.T) {
	s := core.NewServer(core.Implementation{Name: "x", Version: "1"}, nil)
	h := func(context.Context, *core.CallToolRequest, struct{}) (string, error) { return "", nil }
	for name, f := range map[string]func(){
		"resource scheme": func() { apps.AddResource(s, apps.UIResource{URI: "https://x/y", Name: "n", HTML: "h"}) },
		"resource bare":   func() { apps.AddResource(s, apps.UIResource{URI: "ui://", Name: "n", HTML: "h"}) },
		"resource name":   func() { apps.AddResource(s, apps.UIResource{URI: view, HTML: "h"}) },
		"resource body":   func() { apps.AddResource(s, apps.UIResource{URI: view, Name: "n"}) },
		"tool uri":        func() { apps.AddTool(s, &core.Tool{Name: "t"}, apps.ToolUI{ResourceURI: "file:///x"}, h) },
		"tool visibility": func() {
			apps.AddTool(s, &core.Tool{Name: "t"}, apps.ToolUI{ResourceURI: view, Visibility: []apps.Visibility{"user"}}, h)
		},
		"tool nil": func() { apps.AddTool(s, nil, apps.ToolUI{ResourceURI: view}, h) },
	} {
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.HasPrefix(p.(string), "apps: ") {
					t.Errorf("%s: panic %v", name, p)
				}
			}()
			f()
		}()
	}
}
