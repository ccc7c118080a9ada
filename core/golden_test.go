package core_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/core"
)

// Golden wire tests: one txtar file per scenario under
// testdata/wire/{modern,legacy}. The archive comment holds options; the
// "request" file is an HTTP request (request line, headers, blank line,
// body), the "response" file the expected status, relevant headers and the
// normalised JSON body (an array of the messages for an SSE stream).
// Regenerate with: go test ./core -run Golden -update
//
// Options:
//
//	validate: <Def>          the result validates against $defs/<Def> of the
//	                         revision (2026-07-28 for modern/, 2025-11-25 for
//	                         legacy/)
//	validate-message: <Def>  the final message validates against $defs/<Def>
//	notes: <Def>             every message before the final one validates
//	closed: true             the server is closed before the request

var update = flag.Bool("update", false, "rewrite the golden files of TestGolden")

// txtar is a minimal reader and writer of the txtar format
// (golang.org/x/tools/txtar), enough for the golden files.
type txtarFile struct {
	Name string
	Data []byte
}

type txtarArchive struct {
	Comment []byte
	Files   []txtarFile
}

func parseTxtar(data []byte) *txtarArchive {
	a := &txtarArchive{}
	var cur *txtarFile
	for len(data) > 0 {
		line := data
		rest := []byte(nil)
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, rest = data[:i+1], data[i+1:]
		}
		data = rest
		s := strings.TrimRight(string(line), "\n")
		if strings.HasPrefix(s, "-- ") && strings.HasSuffix(s, " --") && len(s) > 6 {
			a.Files = append(a.Files, txtarFile{Name: strings.TrimSpace(s[3 : len(s)-3])})
			cur = &a.Files[len(a.Files)-1]
			continue
		}
		if cur == nil {
			a.Comment = append(a.Comment, line...)
		} else {
			cur.Data = append(cur.Data, line...)
		}
	}
	return a
}

func formatTxtar(a *txtarArchive) []byte {
	var b bytes.Buffer
	b.Write(a.Comment)
	for _, f := range a.Files {
		fmt.Fprintf(&b, "-- %s --\n", f.Name)
		b.Write(f.Data)
		if len(f.Data) > 0 && f.Data[len(f.Data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func (a *txtarArchive) file(name string) *txtarFile {
	for i := range a.Files {
		if a.Files[i].Name == name {
			return &a.Files[i]
		}
	}
	return nil
}

func goldenOptions(comment []byte) map[string]string {
	opts := map[string]string{}
	for _, line := range strings.Split(string(comment), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			opts[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return opts
}

// parseHTTPRequest reads "POST /mcp", headers, a blank line and the body.
func parseHTTPRequest(t *testing.T, data []byte) *http.Request {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(data))
	if !sc.Scan() {
		t.Fatal("empty request")
	}
	method, target, ok := strings.Cut(sc.Text(), " ")
	if !ok {
		t.Fatalf("bad request line %q", sc.Text())
	}
	h := http.Header{}
	n := len(sc.Text()) + 1
	for sc.Scan() {
		n += len(sc.Text()) + 1
		if sc.Text() == "" {
			break
		}
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			t.Fatalf("bad header line %q", sc.Text())
		}
		h.Add(k, strings.TrimSpace(v))
	}
	body := bytes.TrimSpace(data[n:])
	r := httptest.NewRequest(method, target, bytes.NewReader(body))
	r.Header = h
	return r
}

// volatile members are replaced by placeholders before comparison.
var volatile = map[string]string{
	"requestState":  "<requestState>",
	"elicitationId": "<elicitationId>",
}

func scrub(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if p, ok := volatile[k]; ok {
				if _, isStr := e.(string); isStr {
					x[k] = p
					continue
				}
			}
			x[k] = scrub(e)
		}
	case []any:
		for i, e := range x {
			x[i] = scrub(e)
		}
	}
	return v
}

// normalizeJSON re-encodes JSON with sorted keys and two-space indentation.
func normalizeJSON(t testing.TB, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	if err := e.Encode(scrub(decode(t, raw))); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var goldenHeaders = []string{"Content-Type", "Cache-Control", "X-Accel-Buffering", core.HeaderSessionID, "Allow"}

// formatResponse renders a response as the golden "response" file.
func formatResponse(t *testing.T, r *resp) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%d\n", r.Status)
	for _, k := range goldenHeaders {
		v := r.Header.Get(k)
		if v == "" {
			continue
		}
		if k == core.HeaderSessionID {
			v = "<session>"
		}
		fmt.Fprintf(&b, "%s: %s\n", k, v)
	}
	b.WriteString("\n")
	switch {
	case r.SSE:
		all := []byte("[")
		for i, m := range r.Msgs {
			if i > 0 {
				all = append(all, ',')
			}
			all = append(all, m...)
		}
		b.WriteString(normalizeJSON(t, append(all, ']')))
	case len(r.Msgs) == 1:
		b.WriteString(normalizeJSON(t, r.Msgs[0]))
	case len(r.Body) > 0:
		b.WriteString(string(r.Body) + "\n")
	}
	return b.String()
}

// Weather is the structured result of the golden get_weather tool.
type Weather struct {
	Temperature float64 `json:"temperature" jsonschema:"description=Temperature in celsius"`
	Conditions  string  `json:"conditions" jsonschema:"description=Weather conditions description"`
	Humidity    float64 `json:"humidity" jsonschema:"description=Humidity percentage"`
}

type confirmation struct {
	OK bool `json:"ok"`
}

type weatherArgs struct {
	Location string `json:"location" jsonschema:"description=City name or zip code"`
}

// newGoldenServer registers the features the official example requests
// address.
func newGoldenServer(t testing.TB) *core.Server {
	t.Helper()
	langs := []string{"python", "pytorch", "pyside", "ruby", "rust"}
	srv := core.NewServer(core.Implementation{Name: "golden-server", Version: "1.2.3", Title: "Golden"}, &core.ServerOptions{
		Instructions: "Use get_weather for the weather.",
		CacheHints: map[string]core.CacheHint{
			"tools/list":               {TTL: 300 * time.Second, Scope: core.CacheScopePublic},
			"resources/list":           {TTL: 600 * time.Second},
			"resources/templates/list": {TTL: time.Hour, Scope: core.CacheScopePublic},
			"prompts/list":             {TTL: 600 * time.Second, Scope: core.CacheScopePublic},
			"resources/read":           {TTL: time.Minute, Scope: core.CacheScopePrivate},
		},
		StreamKeepAlive: -1,
		CompletionHandler: func(ctx context.Context, req *core.CompleteRequest) (*core.CompleteResult, error) {
			var vals []string
			for _, l := range langs {
				if strings.HasPrefix(l, req.Params.Argument.Value) {
					vals = append(vals, l)
				}
			}
			total := len(vals)
			return &core.CompleteResult{Completion: core.Completion{Values: vals, Total: &total}}, nil
		},
	})
	core.AddTool(srv, &core.Tool{Name: "get_weather", Title: "Weather Information Provider",
		Description: "Get current weather information for a location",
		Icons:       []core.Icon{{Src: "https://example.com/weather-icon.png", MIMEType: "image/png", Sizes: []string{"48x48"}}}},
		func(ctx context.Context, req *core.CallToolRequest, in weatherArgs) (Weather, error) {
			return Weather{Temperature: 22.5, Conditions: "Partly cloudy in " + in.Location, Humidity: 65}, nil
		})
	core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two integers."}, add)
	core.AddTool(srv, &core.Tool{Name: "delete_repo", Description: "Deletes a repository after confirmation."},
		func(ctx context.Context, req *core.CallToolRequest, in struct {
			Repo string `json:"repo"`
		}) (string, error) {
			if c, ok := core.Accepted[confirmation](req.Input, "confirm"); ok && c.OK {
				return "deleted " + in.Repo, nil
			}
			return "", core.InputRequired(core.InputRequests{"confirm": core.ElicitForm("Delete repo "+in.Repo+"?",
				map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}, "required": []string{"ok"}})}, "step1")
		})
	core.AddTool(srv, &core.Tool{Name: "slow_count", Description: "Counts to two, reporting progress."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			for i := 1; i <= 2; i++ {
				if err := req.NotifyProgress(ctx, float64(i), 2, "step "+strconv.Itoa(i)); err != nil {
					return "", err
				}
			}
			req.Log(ctx, core.LevelDebug, "counter", "not sent: below the requested level")
			req.Log(ctx, core.LevelWarning, "counter", "almost done")
			return "done", nil
		})
	srv.AddResource(&core.Resource{URI: "file:///project/src/main.rs", Name: "main.rs", Title: "Rust Software Application Main File",
		Description: "Primary application entry point", MIMEType: "text/x-rust"},
		func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, MIMEType: "text/x-rust",
				Text: "fn main() {\n    println!(\"Hello world!\");\n}"}}}, nil
		})
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "file:///{path}", Name: "Project Files", Title: "📁 Project Files",
		Description: "Access files in the project directory", MIMEType: "application/octet-stream"},
		func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return nil, core.ResourceNotFoundError(req.URI)
		})
	srv.AddPrompt(&core.Prompt{Name: "code_review", Title: "Request Code Review",
		Description: "Asks the LLM to analyze code quality and suggest improvements",
		Arguments:   []core.PromptArgument{{Name: "code", Description: "The code to review", Required: true}}},
		func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
			return &core.GetPromptResult{Description: "Code review prompt", Messages: []core.PromptMessage{
				{Role: core.RoleUser, Content: &core.TextContent{Text: "Please review this Python code:\n" + req.Arguments["code"]}}}}, nil
		})
	return srv
}

func TestGolden(t *testing.T) {
	t.Parallel()
	for _, era := range []string{"modern", "legacy"} {
		rev := modernVersion
		if era == "legacy" {
			rev = core.ProtocolVersion20251125
		}
		files, err := filepath.Glob(filepath.Join("testdata", "wire", era, "*.txtar"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no golden files for %s", era)
		}
		for _, file := range files {
			name := era + "/" + strings.TrimSuffix(filepath.Base(file), ".txtar")
			t.Run(name, func(t *testing.T) {
				if !*update {
					t.Parallel()
				}
				data, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				a := parseTxtar(data)
				opts := goldenOptions(a.Comment)
				reqFile := a.file("request")
				if reqFile == nil {
					t.Fatal("no request section")
				}
				srv := newGoldenServer(t)
				if opts["closed"] == "true" {
					srv.Close()
				}
				hr := parseHTTPRequest(t, reqFile.Data)
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, hr)
				r := parseResp(t, rec.Code, rec.Header(), rec.Body.Bytes())
				got := formatResponse(t, r)

				if def := opts["validate"]; def != "" {
					res := r.result(t)
					validateSpec(t, rev, def, r.resultRaw(t))
					if era == "modern" && str(res["resultType"]) == "" {
						t.Errorf("modern result without resultType")
					}
				}
				if def := opts["validate-message"]; def != "" {
					validateSpec(t, rev, def, r.finalRaw(t))
				}
				if def := opts["notes"]; def != "" {
					if len(r.Msgs) < 2 {
						t.Errorf("want notifications before the final message")
					}
					for _, m := range r.Msgs[:max(len(r.Msgs)-1, 0)] {
						validateSpec(t, rev, def, m)
					}
				}
				if era == "legacy" {
					assertNoModernLeak(t, r)
				}

				respFile := a.file("response")
				if *update {
					if respFile == nil {
						a.Files = append(a.Files, txtarFile{Name: "response"})
						respFile = &a.Files[len(a.Files)-1]
					}
					respFile.Data = []byte(got)
					if err := os.WriteFile(file, formatTxtar(a), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				if respFile == nil || len(respFile.Data) == 0 {
					t.Fatalf("no response section; run with -update")
				}
				if want := string(respFile.Data); got != want {
					t.Errorf("response differs from %s (run with -update after checking)\n--- got ---\n%s--- want ---\n%s", file, got, want)
				}
			})
		}
	}
}

// assertNoModernLeak checks that a legacy response carries none of the
// 2026-07-28 members (docs/design.md, "Two eras, one endpoint").
func assertNoModernLeak(t *testing.T, r *resp) {
	t.Helper()
	for _, m := range r.Msgs {
		var walk func(v any, path string)
		walk = func(v any, path string) {
			switch x := v.(type) {
			case map[string]any:
				for k, e := range x {
					switch k {
					case "resultType", "ttlMs", "cacheScope", "inputRequests", core.MetaServerInfo:
						t.Errorf("legacy message carries %s at %s: %s", k, path, m)
					}
					walk(e, path+"/"+k)
				}
			case []any:
				for i, e := range x {
					walk(e, path+"/"+strconv.Itoa(i))
				}
			}
		}
		v := decode(t, m)
		if res, ok := at(v, "result").(map[string]any); ok {
			walk(res, "result")
		}
	}
}

// TestSpecExamplesValidate checks that the copied official examples are
// intact: each validates against the definition it is named after.
func TestSpecExamplesValidate(t *testing.T) {
	t.Parallel()
	dirs, err := filepath.Glob(filepath.Join("testdata", "spec", modernVersion, "examples", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(d, "*.json"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			validateSpec(t, modernVersion, filepath.Base(d), b)
		}
	}
}

// TestGoldenRequestsValid checks that every modern golden request that is
// not meant to be malformed is a valid 2026-07-28 request message.
func TestGoldenRequestsValid(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join("testdata", "wire", "modern", "*.txtar"))
	defs := map[string]string{
		"server/discover": "DiscoverRequest", "tools/list": "ListToolsRequest", "tools/call": "CallToolRequest",
		"resources/list": "ListResourcesRequest", "resources/templates/list": "ListResourceTemplatesRequest",
		"resources/read": "ReadResourceRequest", "prompts/list": "ListPromptsRequest", "prompts/get": "GetPromptRequest",
		"completion/complete": "CompleteRequest", "subscriptions/listen": "SubscriptionsListenRequest",
	}
	n := 0
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "error-") {
			continue
		}
		data, _ := os.ReadFile(f)
		hr := parseHTTPRequest(t, parseTxtar(data).file("request").Data)
		var buf bytes.Buffer
		buf.ReadFrom(hr.Body)
		method := str(at(decode(t, buf.Bytes()), "method"))
		def := defs[method]
		if def == "" {
			t.Errorf("%s: unexpected method %q", f, method)
			continue
		}
		validateSpec(t, modernVersion, def, buf.Bytes())
		n++
	}
	if n < 10 {
		t.Errorf("only %d valid golden requests", n)
	}
}

// keysOf is a sorted key list, for messages.
func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
