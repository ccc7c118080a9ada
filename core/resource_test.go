package core_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/core"
)

// TestResources checks resources/read of static resources and templates,
// and the errors for missing resources in both eras (2026-07-28
// server/resources).
func TestResources(t *testing.T) {
	t.Parallel()
	srv := newFixture(t, nil)
	srv.AddResource(&core.Resource{URI: "test://blob", Name: "blob", MIMEType: "image/png"},
		func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, MIMEType: "image/png", Blob: []byte{0x89, 'P', 'N', 'G'}}}}, nil
		})
	srv.AddResource(&core.Resource{URI: "test://nil", Name: "nil"},
		func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return nil, nil
		})
	srv.AddResource(&core.Resource{URI: "test://fails", Name: "fails"},
		func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return nil, fmt.Errorf("disk on fire at /var/secret")
		})
	vars := make(chan map[string]string, 10)
	tmpl := func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
		vars <- req.Vars
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: "ok"}}}, nil
	}
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://files/{+path}", Name: "files"}, tmpl)
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://users/{user}/posts/{post}", Name: "posts"}, tmpl)
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://search{?q,lang}", Name: "search"}, tmpl)

	read := func(uri string) *resp { return mreq(1, "resources/read", map[string]any{"uri": uri}).do(t, srv) }
	readLegacy := func(uri string) *resp {
		return lreq(1, "resources/read", map[string]any{"uri": uri}, core.ProtocolVersion20251125, "").do(t, srv)
	}

	t.Run("static text", func(t *testing.T) {
		r := read("test://static")
		res := r.result(t)
		if str(at(res, "contents", 0, "text")) != "static text" || str(at(res, "contents", 0, "uri")) != "test://static" ||
			str(at(res, "contents", 0, "mimeType")) != "text/plain" {
			t.Errorf("contents: %s", r.Body)
		}
		validateSpec(t, modernVersion, "ReadResourceResult", r.resultRaw(t))
	})
	t.Run("static blob", func(t *testing.T) {
		r := read("test://blob")
		res := r.result(t)
		if str(at(res, "contents", 0, "blob")) != "iVBORw==" || has(at(res, "contents", 0), "text") {
			t.Errorf("contents: %s", r.Body)
		}
		validateSpec(t, modernVersion, "ReadResourceResult", r.resultRaw(t))
	})
	t.Run("template variables", func(t *testing.T) {
		for uri, want := range map[string]map[string]string{
			"test://items/42":               {"id": "42"},
			"test://items/%E2%9C%93":        {"id": "✓"},
			"test://files/a/b/c.txt":        {"path": "a/b/c.txt"},
			"test://users/ann/posts/7":      {"user": "ann", "post": "7"},
			"test://users/a%20b/posts/x":    {"user": "a b", "post": "x"},
			"test://search?q=go&lang=en":    {"q": "go", "lang": "en"},
			"test://search?lang=fr":         {"lang": "fr"},
			"test://files/with%20space.txt": {"path": "with space.txt"},
		} {
			r := read(uri)
			if strings.HasPrefix(uri, "test://items/") { // the fixture's handler
				if got := str(at(r.result(t), "contents", 0, "text")); got != "item "+want["id"] {
					t.Errorf("%s: text %q", uri, got)
				}
				continue
			}
			r.result(t)
			select {
			case got := <-vars:
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: vars = %v, want %v", uri, got, want)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s: the template handler did not run", uri)
			}
		}
	})
	t.Run("not found modern", func(t *testing.T) {
		for _, uri := range []string{"test://nonexistent", "test://items/missing", "test://users/x"} {
			r := read(uri)
			e := r.wantError(t, 200, core.CodeInvalidParams)
			if got := str(at(e, "data", "uri")); got != uri {
				t.Errorf("%s: data.uri = %q", uri, got)
			}
			validateSpec(t, modernVersion, "JSONRPCErrorResponse", r.finalRaw(t))
		}
	})
	t.Run("not found legacy", func(t *testing.T) {
		for _, uri := range []string{"test://nonexistent", "test://items/missing"} {
			e := readLegacy(uri).wantError(t, 200, core.CodeResourceNotFound)
			if got := str(at(e, "data", "uri")); got != uri {
				t.Errorf("%s: data.uri = %q", uri, got)
			}
		}
	})
	t.Run("empty contents is an error", func(t *testing.T) {
		for _, uri := range []string{"test://items/empty", "test://nil"} {
			r := read(uri)
			if has(r.final(t), "result") {
				t.Fatalf("%s: a result for empty contents: %s", uri, r.Body)
			}
			r.wantError(t, 200, core.CodeInvalidParams)
			readLegacy(uri).wantError(t, 200, core.CodeResourceNotFound)
		}
	})
	t.Run("handler failure", func(t *testing.T) {
		r := read("test://fails")
		r.wantError(t, 200, core.CodeInternalError)
		if strings.Contains(string(r.Body), "secret") {
			t.Errorf("internal detail leaked: %s", r.Body)
		}
	})
	t.Run("bad uri", func(t *testing.T) {
		mreq(1, "resources/read", map[string]any{"uri": "relative/path"}).do(t, srv).wantError(t, 200, core.CodeInvalidParams)
		mreq(1, "resources/read", map[string]any{"uri": ""}).do(t, srv).wantError(t, 200, core.CodeInvalidParams)
	})
	t.Run("lists", func(t *testing.T) {
		r := mreq(1, "resources/list", nil).do(t, srv)
		validateSpec(t, modernVersion, "ListResourcesResult", r.resultRaw(t))
		var uris []string
		for _, x := range at(r.result(t), "resources").([]any) {
			uris = append(uris, str(at(x, "uri")))
		}
		// Listed in registration order.
		if want := []string{"test://static", "test://blob", "test://nil", "test://fails"}; !reflect.DeepEqual(uris, want) {
			t.Errorf("resources = %v, want %v", uris, want)
		}
		rt := mreq(2, "resources/templates/list", nil).do(t, srv)
		validateSpec(t, modernVersion, "ListResourceTemplatesResult", rt.resultRaw(t))
		if n := len(at(rt.result(t), "resourceTemplates").([]any)); n != 4 {
			t.Errorf("%d templates, want 4", n)
		}
	})
	t.Run("invalid definitions panic", func(t *testing.T) {
		s := core.NewServer(testImpl, nil)
		h := func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return nil, nil
		}
		for _, f := range []func(){
			func() { s.AddResource(&core.Resource{URI: "relative", Name: "r"}, h) },
			func() { s.AddResource(&core.Resource{URI: "test://x"}, h) },
			func() { s.AddResource(nil, h) },
			func() { s.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://{unclosed", Name: "t"}, h) },
			func() { s.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://{}", Name: "t"}, h) },
			func() { s.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://{a}", Name: ""}, h) },
		} {
			mustPanic(t, f)
		}
	})
}
