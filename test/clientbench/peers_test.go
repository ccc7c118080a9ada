package clientbench

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/internal/testenv"
	"github.com/mcpfn/mcpfn/mcp"
	"github.com/mcpfn/mcpfn/test/clientbench/gosdkpeer"
)

// The TestPeer* tests run package client against servers that are not
// mcpfn: go-sdk v1.8.0 (in process, package gosdkpeer) and the official
// TypeScript SDK v1 and v2 (test/interop/peer-ts-v*.mjs under Node, which
// test/interop/peers.sh installs on first use and also drives through the
// CLI).

// nodeSDKs is what the TypeScript peers need. peers.sh runs these tests
// with MCPFN_REQUIRE_NODE=1, so a missing Node fails there.
var nodeSDKs = testenv.Emulator{
	Name:    "Node and the official TypeScript MCP SDKs (installed on first use)",
	Require: "MCPFN_REQUIRE_NODE",
	Run:     "test/interop/peers.sh; or go test",
}

var installer = testenv.Installer{Emulator: nodeSDKs, Command: []string{"../interop/peers.sh", "--install"}, Keys: []string{"node", "dir"}}

// installNode installs (once) Node and the SDKs with peers.sh --install.
func installNode(t *testing.T) (node, dir string) {
	t.Helper()
	v := installer.Values(t)
	return v["node"], v["dir"]
}

// startNodePeer runs test/interop/NAME with Node (a copy inside the package
// directory, whose node_modules it imports) and returns its endpoint and
// base URL.
func startNodePeer(t *testing.T, name string) (url, base string) {
	t.Helper()
	node, dir := installNode(t)
	url = testenv.StartNodePeer(t, node, dir, filepath.Join("../interop", name))
	return url, strings.TrimSuffix(url, "/mcp")
}

// getJSON decodes the JSON at url into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func post(t *testing.T, url string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// names returns the sorted tool names of a ListTools answer, or the error
// as the only name.
func names(tools []*mcp.Tool, err error) []string {
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	var out []string
	for _, tl := range tools {
		out = append(out, tl.Name)
	}
	slices.Sort(out)
	return out
}

// TestPeerTSv1SessionNotFound: the TypeScript SDK v1 answers an ended
// session with 404 and {"error":{"code":-32001,...}}; the client starts a
// new session and sends the request again, and the tool runs once.
func TestPeerTSv1SessionNotFound(t *testing.T) {
	t.Parallel()
	url, base := startNodePeer(t, "peer-ts-v1.mjs")
	type stats struct{ Initialize, Count, NotFound, Sessions int }
	ctx := context.Background()
	for _, mode := range []client.Mode{client.ModeAuto, client.ModeLegacy} {
		t.Run(mode.String(), func(t *testing.T) {
			c, err := client.Connect(ctx, url, &client.Options{Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Modern() {
				t.Fatal("the v1 SDK server is legacy")
			}
			var before, after stats
			getJSON(t, base+"/admin/stats", &before)
			post(t, base+"/admin/expire-next")
			if got := names(c.ListTools(ctx, nil)); !slices.Equal(got, []string{"count", "echo"}) {
				t.Fatalf("tools %v", got)
			}
			post(t, base+"/admin/expire-all")
			if _, err := c.CallTool(ctx, "count", nil, nil); err != nil {
				t.Fatalf("call after the session ended: %v", err)
			}
			getJSON(t, base+"/admin/stats", &after)
			if after.NotFound-before.NotFound != 2 || after.Initialize-before.Initialize != 2 || after.Count-before.Count != 1 {
				t.Fatalf("404s +%d, initialize +%d, runs +%d; want +2, +2, +1",
					after.NotFound-before.NotFound, after.Initialize-before.Initialize, after.Count-before.Count)
			}
		})
	}
}

// paramSeen is what a peer recorded of the tools/call requests.
type paramSeen struct {
	Calls []map[string]string `json:"calls"`
	Lists map[string]int      `json:"lists"`
}

// checkParamHeaders: a fresh client's first tools/call to a tool with
// x-mcp-header declarations carries its Mcp-Param-* headers, the
// non-ASCII value in the Base64 form, with no -32020 round.
func checkParamHeaders(t *testing.T, url string, seen func() paramSeen, opts *client.Options) {
	t.Helper()
	ctx := context.Background()
	c, err := client.Connect(ctx, url, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !c.Modern() {
		t.Fatal("want a 2026-07-28 connection")
	}
	n := len(seen().Calls)
	r, err := c.CallTool(ctx, "where", map[string]any{"region": "Zürich", "level": 2}, nil)
	if err != nil || r.IsError {
		t.Fatalf("call: %v %v", err, r)
	}
	calls := seen().Calls[n:]
	want := map[string]string{"Mcp-Param-Region": "=?base64?WsO8cmljaA==?=", "Mcp-Param-Level": "2"}
	if len(calls) != 1 || !maps(calls[0], want) {
		t.Fatalf("tools/call requests %v, want one with %v", calls, want)
	}
	if _, err := c.CallTool(ctx, "where", map[string]any{"region": "eu-west-1"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := seen().Calls; got[len(got)-1]["Mcp-Param-Region"] != "eu-west-1" || len(got) != n+2 {
		t.Fatalf("second call: %v", got[n:])
	}
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// checkCachePerCredential: the peer's tools/list is private to the token;
// a per-call Authorization (any spelling) bypasses the cache, and the
// connection's own list is served from the cache after it.
func checkCachePerCredential(t *testing.T, url string, seen func() paramSeen) {
	t.Helper()
	ctx := context.Background()
	c, err := client.Connect(ctx, url, &client.Options{TokenSource: client.StaticToken("alice")})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := names(c.ListTools(ctx, nil)); !slices.Equal(got, []string{"alice_tool", "where"}) {
		t.Fatalf("alice: %v", got)
	}
	for _, h := range []http.Header{{"Authorization": {"Bearer bob"}}, {"authorization": {"Bearer bob"}}} {
		if got := names(c.ListTools(ctx, &client.CallOptions{Header: h})); !slices.Equal(got, []string{"bob_tool", "where"}) {
			t.Fatalf("a call with Bob's header got %v", got)
		}
	}
	if got := names(c.ListTools(ctx, &client.CallOptions{Token: "bob"})); !slices.Equal(got, []string{"bob_tool", "where"}) {
		t.Fatalf("WithAuthorization(bob) got %v", got)
	}
	if got := names(c.ListTools(ctx, nil)); !slices.Equal(got, []string{"alice_tool", "where"}) {
		t.Fatalf("alice after bob: %v", got)
	}
	if s := seen(); s.Lists["alice"] != 1 || s.Lists["bob"] != 3 {
		t.Fatalf("tools/list per token %v, want alice 1 (then the cache), bob 3", s.Lists)
	}
}

func TestPeerTSv2ParamHeaders(t *testing.T) {
	t.Parallel()
	url, base := startNodePeer(t, "peer-ts-v2.mjs")
	seen := func() paramSeen {
		var s paramSeen
		getJSON(t, base+"/admin/stats", &s)
		return s
	}
	checkParamHeaders(t, url, seen, nil)
	checkParamHeaders(t, url, seen, &client.Options{TokenSource: client.StaticToken("bob")})
}

func TestPeerTSv2CachePerCredential(t *testing.T) {
	t.Parallel()
	url, base := startNodePeer(t, "peer-ts-v2.mjs")
	checkCachePerCredential(t, url, func() paramSeen {
		var s paramSeen
		getJSON(t, base+"/admin/stats", &s)
		return s
	})
}

func gosdkPeer(t *testing.T) (string, func() paramSeen) {
	h, st := gosdkpeer.Handler()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL, func() paramSeen {
		s := st.Snapshot()
		return paramSeen{Calls: s.Calls, Lists: s.Lists}
	}
}

func TestPeerGoSDKParamHeaders(t *testing.T) {
	t.Parallel()
	url, seen := gosdkPeer(t)
	checkParamHeaders(t, url, seen, &client.Options{TokenSource: client.StaticToken("alice")})
}

func TestPeerGoSDKCachePerCredential(t *testing.T) {
	t.Parallel()
	url, seen := gosdkPeer(t)
	checkCachePerCredential(t, url, seen)
}
