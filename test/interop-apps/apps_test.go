// Package interopapps checks package ext/apps (MCP Apps, SEP-1865) against
// peers mcpfn did not write: the same app registered with
// @modelcontextprotocol/ext-apps' server helpers on the official TypeScript
// SDK v2 server (peer-apps.mjs) and with ext/apps on mcpfn must list and
// read the same (goldens in testdata/), and a host built from the official
// TypeScript client and ext-apps' host-side helpers and schemas
// (host-check.mjs) must accept mcpfn's app. run.sh installs Node and the
// pinned packages and runs these tests with MCPFN_REQUIRE_NODE=1; a plain
// `go test` installs them on first use too, and skips when it cannot.
package interopapps

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/ext/apps"
	"github.com/mcpfn/mcpfn/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the goldens in testdata/ from the TypeScript peer")

var nodeSDK = testenv.Emulator{
	Name:    "Node, the official TypeScript SDK v2 and @modelcontextprotocol/ext-apps (installed on first use)",
	Require: "MCPFN_REQUIRE_NODE",
	Run:     "test/interop-apps/run.sh; or go test",
}

var installer = testenv.Installer{Emulator: nodeSDK, Command: []string{"./run.sh", "--install"}, Keys: []string{"node", "dir"}}

// fixture is app.json: the app both servers register.
type fixture struct {
	Tool struct {
		Title       string `json:"title"`
		Description string `json:"description"`
	} `json:"tool"`
	AppOnlyTool struct {
		Description string `json:"description"`
	} `json:"appOnlyTool"`
	Resource struct {
		URI         string          `json:"uri"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		HTML        string          `json:"html"`
		UI          apps.ResourceUI `json:"ui"`
	} `json:"resource"`
}

func loadFixture(t *testing.T) (*fixture, string) {
	t.Helper()
	path, err := filepath.Abs("app.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f fixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return &f, path
}

type weatherIn struct {
	Location string `json:"location"`
}

// mcpfnServer registers the fixture's app with ext/apps. get_weather's
// text says whether the caller declared the extension (ClientSupportsUI),
// which host-check.mjs reports back.
func mcpfnServer(t *testing.T, f *fixture) string {
	t.Helper()
	s := core.NewServer(core.Implementation{Name: "mcpfn-apps", Version: "1"}, &core.ServerOptions{DisableRequestLog: true})
	apps.AddResource(s, apps.UIResource{URI: f.Resource.URI, Name: f.Resource.Name, Description: f.Resource.Description,
		HTML: f.Resource.HTML, UI: &f.Resource.UI})
	apps.AddTool(s, &core.Tool{Name: "get_weather", Title: f.Tool.Title, Description: f.Tool.Description},
		apps.ToolUI{ResourceURI: f.Resource.URI},
		func(ctx context.Context, req *core.CallToolRequest, in weatherIn) (*core.CallToolResult, error) {
			view := "text"
			if apps.ClientSupportsUI(req.Request) {
				view = "ui"
			}
			return &core.CallToolResult{Content: []core.Content{&core.TextContent{Text: "Sunny in " + in.Location + " (" + view + ")"}},
				StructuredContent: map[string]any{"location": in.Location, "conditions": "sunny"}}, nil
		})
	apps.AddTool(s, &core.Tool{Name: "refresh_weather", Description: f.AppOnlyTool.Description},
		apps.ToolUI{ResourceURI: f.Resource.URI, Visibility: []apps.Visibility{apps.VisibilityApp}},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (*core.CallToolResult, error) {
			return &core.CallToolResult{Content: []core.Content{&core.TextContent{Text: "refreshed"}}}, nil
		})
	ts := httptest.NewServer(nethttp.Handler(s))
	t.Cleanup(ts.Close)
	return ts.URL + nethttp.DefaultPath
}

const (
	modern = core.ProtocolVersion20260728
	legacy = core.ProtocolVersion20251125
)

// uiCaps are the client capabilities of a host of apps.
var uiCaps = map[string]any{"extensions": map[string]any{apps.ExtensionID: map[string]any{"mimeTypes": []string{apps.MIMEType}}}}

// session is one era's conversation with a server over raw HTTP: the
// requests are the test's own, so that both servers get exactly the same.
type session struct {
	t       *testing.T
	url     string
	version string
	sid     string // a legacy session id, when the server made one
	id      int
}

// post sends one request and returns its result object, raw.
func (s *session) post(method string, params map[string]any, name string) json.RawMessage {
	s.t.Helper()
	s.id++
	p := map[string]any{}
	for k, v := range params {
		p[k] = v
	}
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	if s.version == modern {
		p["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    modern,
			"io.modelcontextprotocol/clientCapabilities": uiCaps,
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "golden", "version": "1"},
		}
		h.Set("Mcp-Protocol-Version", modern)
		h.Set("Mcp-Method", method)
		if name != "" {
			h.Set("Mcp-Name", name)
		}
	} else if method != "initialize" {
		h.Set("Mcp-Protocol-Version", s.version)
		if s.sid != "" {
			h.Set("Mcp-Session-Id", s.sid)
		}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.id, "method": method, "params": p})
	req, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(body))
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b = lastData(b)
	}
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Result == nil {
		s.t.Fatalf("%s %s: HTTP %d %s", s.url, method, resp.StatusCode, b)
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && method == "initialize" {
		s.sid = sid
	}
	return m.Result
}

// initialized sends notifications/initialized in the legacy session.
func (s *session) initialized() {
	s.t.Helper()
	body := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
	req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {s.version}, "Mcp-Session-Id": {s.sid}}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		s.t.Fatalf("notifications/initialized: HTTP %d", resp.StatusCode)
	}
}

// lastData is the data of the last event of an SSE body.
func lastData(b []byte) []byte {
	var last []byte
	for _, line := range bytes.Split(b, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			last = bytes.TrimSpace(d)
		}
	}
	return last
}

// exchanges returns, for one server and era, the results the goldens hold:
// the capabilities' extensions, tools/list, resources/list and
// resources/read of the view, each normalised (normalise).
func exchanges(t *testing.T, url, version string, f *fixture) map[string]any {
	t.Helper()
	s := &session{t: t, url: url, version: version}
	var caps json.RawMessage
	if version == modern {
		caps = s.post("server/discover", nil, "")
	} else {
		caps = s.post("initialize", map[string]any{"protocolVersion": version, "capabilities": uiCaps,
			"clientInfo": map[string]any{"name": "golden", "version": "1"}}, "")
		if s.sid != "" {
			s.initialized()
		}
	}
	var c struct {
		Capabilities struct {
			Extensions any `json:"extensions"`
		} `json:"capabilities"`
	}
	json.Unmarshal(caps, &c)
	return map[string]any{
		"extensions":     c.Capabilities.Extensions,
		"tools/list":     normalise(s.post("tools/list", nil, "")),
		"resources/list": normalise(s.post("resources/list", nil, "")),
		"resources/read": normalise(s.post("resources/read", map[string]any{"uri": f.Resource.URI}, f.Resource.URI)),
	}
}

// normalise decodes a result and removes what legitimately differs between
// two servers of the same app: the server's identity in
// _meta["io.modelcontextprotocol/serverInfo"] (2026-07-28 puts it in every
// result's _meta; a _meta left empty goes too), and two members at the
// root of a tool's inputSchema that come from how each SDK derives a
// schema from its language's types, not from the app: the $schema a
// zod-derived schema declares (the dialect, 2020-12, the default of both
// eras, which mcpfn leaves implicit) and the additionalProperties false
// mcpfn derives from a Go struct (which zod's default leaves open).
// Everything else — resultType, ttlMs, cacheScope, every tool, resource
// and content member and all of _meta.ui — must agree.
func normalise(raw json.RawMessage) any {
	var v map[string]any
	json.Unmarshal(raw, &v)
	if m, ok := v["_meta"].(map[string]any); ok {
		delete(m, "io.modelcontextprotocol/serverInfo")
		if len(m) == 0 {
			delete(v, "_meta")
		}
	}
	if tools, ok := v["tools"].([]any); ok {
		for _, tl := range tools {
			if s, ok := tl.(map[string]any)["inputSchema"].(map[string]any); ok {
				delete(s, "$schema")
				if s["additionalProperties"] == false {
					delete(s, "additionalProperties")
				}
			}
		}
	}
	return v
}

// TestGolden: the TypeScript peer with ext-apps' helpers and mcpfn with
// ext/apps serve the same app, in 2026-07-28 and 2025-11-25.
func TestGolden(t *testing.T) {
	v := installer.Values(t)
	f, appJSON := loadFixture(t)
	t.Setenv("APP_JSON", appJSON)
	peer := testenv.StartNodePeer(t, v["node"], v["dir"], "peer-apps.mjs")
	ours := mcpfnServer(t, f)
	for _, version := range []string{modern, legacy} {
		t.Run(version, func(t *testing.T) {
			want := exchanges(t, peer, version, f)
			got := exchanges(t, ours, version, f)
			golden := filepath.Join("testdata", "golden-"+version+".json")
			wantJSON, _ := json.MarshalIndent(want, "", "  ")
			if *update {
				if err := os.WriteFile(golden, append(wantJSON, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			fileJSON, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -update writes it from the peer)", err)
			}
			var file map[string]any
			if err := json.Unmarshal(fileJSON, &file); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"extensions", "tools/list", "resources/list", "resources/read"} {
				if !reflect.DeepEqual(jsonRound(want[k]), file[k]) {
					t.Errorf("%s: the TypeScript peer differs from %s:\n%s", k, golden, diff(file[k], want[k]))
				}
				if !reflect.DeepEqual(jsonRound(got[k]), file[k]) {
					t.Errorf("%s: mcpfn differs from %s:\n%s", k, golden, diff(file[k], got[k]))
				}
			}
		})
	}
}

func jsonRound(v any) any {
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	return out
}

func diff(want, got any) string {
	w, _ := json.MarshalIndent(want, "", "  ")
	g, _ := json.MarshalIndent(got, "", "  ")
	return fmt.Sprintf("want %s\ngot  %s", w, g)
}

// TestHostCheck: host-check.mjs accepts mcpfn's app in both eras, and
// mcpfn's ClientSupportsUI saw the extension the TypeScript client
// declared, and its absence. The check runs against the TypeScript peer
// first: a check that rejects the reference would prove nothing.
func TestHostCheck(t *testing.T) {
	v := installer.Values(t)
	f, appJSON := loadFixture(t)
	t.Setenv("APP_JSON", appJSON)
	peer := testenv.StartNodePeer(t, v["node"], v["dir"], "peer-apps.mjs")
	ours := mcpfnServer(t, f)
	script := copyScript(t, v["dir"], "host-check.mjs")
	for _, version := range []string{modern, legacy} {
		for _, target := range []struct{ name, url string }{{"peer", peer}, {"mcpfn", ours}} {
			t.Run(version+"/"+target.name, func(t *testing.T) {
				cmd := exec.Command(v["node"], script, target.url, version)
				cmd.Dir = v["dir"]
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
					if strings.HasPrefix(line, "FAIL ") {
						t.Error(line)
					}
				}
				if err != nil {
					t.Fatalf("host-check.mjs: %v\n%s%s", err, out, stderr.Bytes())
				}
				if target.name != "mcpfn" {
					return
				}
				for _, want := range []string{"CALL declared Sunny in Paris (ui)", "CALL bare Sunny in Paris (text)"} {
					if !strings.Contains(string(out), want+"\n") {
						t.Errorf("host-check.mjs output lacks %q:\n%s", want, out)
					}
				}
			})
		}
	}
}

// copyScript copies a script into the package directory, whose
// node_modules it imports, under a unique name removed when the test ends.
func copyScript(t *testing.T, dir, name string) string {
	t.Helper()
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(dir, "host-check-*.mjs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(f.Name()) })
	if _, err := f.Write(src); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return f.Name()
}
