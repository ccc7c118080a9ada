package clientbench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/core"
	"github.com/yosida95/uritemplate/v3"
)

// The URI template library both Go SDKs use (github.com/yosida95/uritemplate
// v3.0.2) beside core's matcher (core/uritemplate.go), on resource
// templates: mcp-go reads a template's variables with Template.Match, the
// official go-sdk checks a match with a Regexp compiled per read (and gives
// the handler no variables). See docs/design.md, "URI templates".

const longTemplate = "file:///{+path}/x"

// templateServer serves longTemplate and search://items{?q,limit}; its
// handler echoes the variables it got.
func templateServer() *core.Server {
	srv := core.NewServer(core.Implementation{Name: "templates", Version: "1.0.0"}, &core.ServerOptions{DisableRequestLog: true})
	echo := func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: "q=" + req.Vars["q"] + " limit=" + req.Vars["limit"]}}}, nil
	}
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: longTemplate, Name: "files"}, echo)
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "search://items{?q,limit}", Name: "search"}, echo)
	return srv
}

// read posts a 2026-07-28 resources/read of uri and returns the status and
// the body.
func read(h http.Handler, uri string) (int, string) {
	body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"` + uri + `","_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "resources/read")
	req.Header.Set("Mcp-Name", core.EncodeHeaderValue(uri))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// A query is read as a query by core, in any order and with parameters the
// template does not name; the library matches only the template's order.
func TestURITemplateQueryOrder(t *testing.T) {
	lib := uritemplate.MustNew("search://items{?q,limit}")
	srv := templateServer()
	for _, uri := range []string{"search://items?q=cat&limit=5", "search://items?limit=5&q=cat", "search://items?q=cat&limit=5&page=2"} {
		status, body := read(srv, uri)
		if status != http.StatusOK || !strings.Contains(body, `q=cat limit=5`) {
			t.Errorf("core, %s: %d %s", uri, status, body)
		}
	}
	if v := lib.Match("search://items?q=cat&limit=5"); v.Get("q").String() != "cat" {
		t.Errorf("the library does not read the template's own order: %v", v)
	}
	for _, uri := range []string{"search://items?limit=5&q=cat", "search://items?q=cat&limit=5&page=2"} {
		if v := lib.Match(uri); v != nil {
			t.Errorf("the library now matches %s: %v (docs/design.md says it does not)", uri, v)
		}
	}
}

// BenchmarkURITemplateLong matches a URI of 1 and 16 KiB (a hostile
// resources/read) against {+path}/x: core through a whole resources/read,
// the library's Match (mcp-go) and its Regexp compiled per read (go-sdk).
func BenchmarkURITemplateLong(b *testing.B) {
	srv := templateServer()
	for _, n := range []int{1 << 10, 16 << 10} {
		uri := "file:///" + strings.Repeat("a/", n/2)
		size := map[int]string{1 << 10: "1KiB", 16 << 10: "16KiB"}[n]
		b.Run("core-read/"+size, func(b *testing.B) {
			for b.Loop() {
				if status, _ := read(srv, uri); status != http.StatusNotFound && status != http.StatusOK {
					b.Fatal(status)
				}
			}
		})
		b.Run("library-Match/"+size, func(b *testing.B) {
			tmpl := uritemplate.MustNew(longTemplate)
			for b.Loop() {
				tmpl.Match(uri)
			}
		})
		b.Run("library-Regexp-per-read/"+size, func(b *testing.B) {
			for b.Loop() {
				tmpl, _ := uritemplate.New(longTemplate)
				tmpl.Regexp().MatchString(uri)
			}
		})
	}
}
