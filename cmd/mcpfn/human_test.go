package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/core"
)

// humanServer is a real mcpfn server with something of every kind the
// human output shows: tools with arguments and descriptions, a tool with
// structured output, one that reports progress and logs, a failing tool,
// text and binary resources, a template, prompts with arguments.
func humanServer(t *testing.T) string {
	srv := core.NewServer(core.Implementation{Name: "human-test", Version: "1.2.3"}, &core.ServerOptions{Instructions: "Use echo.\nThen weather."})
	core.AddTool(srv, &core.Tool{Name: "echo", Description: "Echoes its input.\nSecond line, not in the table."}, func(ctx context.Context, req *core.CallToolRequest, in struct {
		S     string `json:"s"`
		Times int    `json:"times,omitempty"`
	}) (string, error) {
		return "echo:" + in.S, nil
	})
	core.AddTool(srv, &core.Tool{Name: "weather", Title: "Weather", Description: "The weather in a city."}, func(ctx context.Context, req *core.CallToolRequest, in struct {
		City string `json:"city"`
	}) (struct {
		City  string  `json:"city"`
		TempC float64 `json:"tempC"`
	}, error) {
		return struct {
			City  string  `json:"city"`
			TempC float64 `json:"tempC"`
		}{in.City, 21.5}, nil
	})
	core.AddTool(srv, &core.Tool{Name: "slow", Description: strings.Repeat("A long description. ", 20)}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
		req.NotifyProgress(ctx, 1, 2, "half way")
		req.Log(ctx, core.LevelInfo, "slow", "a log message")
		req.Log(ctx, core.LevelDebug, "slow", "a debug message")
		req.NotifyProgress(ctx, 2, 2, "")
		return "done", nil
	})
	core.AddTool(srv, &core.Tool{Name: "fails"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
		return "", core.ToolErrorf("it broke")
	})
	srv.AddResource(&core.Resource{URI: "test://readme", Name: "readme", Description: "The read-me.", MIMEType: "text/plain"},
		func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, MIMEType: "text/plain", Text: "line one\nline two\n"}}}, nil
		})
	srv.AddResource(&core.Resource{URI: "test://logo", Name: "logo", MIMEType: "image/png"},
		func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, MIMEType: "image/png", Blob: make([]byte, 2048)}}}, nil
		})
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://item/{id}", Name: "item", Description: "An item by id."},
		func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: "item " + req.Vars["id"]}}}, nil
		})
	srv.AddPrompt(&core.Prompt{Name: "greet", Description: "A greeting.", Arguments: []core.PromptArgument{{Name: "name", Required: true}, {Name: "tone"}}},
		func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
			return &core.GetPromptResult{Description: "Greets someone.", Messages: []core.PromptMessage{
				{Role: core.RoleUser, Content: &core.TextContent{Text: "Say hello to " + req.Arguments["name"] + " (" + req.Arguments["tone"] + ")"}}}}, nil
		})
	ts := httptest.NewServer(nethttp.NewHandler(srv, nil))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// human runs the CLI as on a terminal of 80 columns.
func human(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runEnv(context.Background(), args, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, tty: true, width: 80})
	return code, out.String(), errb.String()
}

// TestHumanOutput: on a terminal each command prints text for people,
// the same in both eras, and the server's progress and log messages go to
// stderr.
func TestHumanOutput(t *testing.T) {
	t.Parallel()
	url := humanServer(t)
	for _, mode := range []string{"modern", "legacy"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			cases := []struct {
				args []string
				code int
				out  string // the whole of stdout
				errs string // in stderr
			}{
				{args: []string{"tools", url}, out: "" +
					"TOOL     ARGUMENTS  DESCRIPTION\n" +
					"echo     s [times]  Echoes its input.\n" +
					"fails\n" +
					// Cut to the terminal's 80 columns.
					"slow                A long description. A long description. A long description…\n" +
					"weather  city       Weather - The weather in a city.\n"},
				{args: []string{"call", url, "echo", `{"s":"hi"}`}, out: "echo:hi\n"},
				{args: []string{"call", url, "weather", `{"city":"Oslo"}`}, out: "{\n  \"city\": \"Oslo\",\n  \"tempC\": 21.5\n}\n"},
				{args: []string{"call", url, "slow"}, out: "done\n",
					errs: "mcpfn: progress 1/2 half way\nmcpfn: log [info] slow: a log message\nmcpfn: progress 2/2\n"},
				{args: []string{"call", url, "fails"}, code: exitIsError, out: "it broke\n", errs: "(isError)"},
				{args: []string{"resources", url}, out: "" +
					"URI            NAME    MIME TYPE   DESCRIPTION\n" +
					"test://readme  readme  text/plain  The read-me.\n" +
					"test://logo    logo    image/png\n" +
					"\n" +
					"URI TEMPLATE      NAME  MIME TYPE  DESCRIPTION\n" +
					"test://item/{id}  item             An item by id.\n"},
				{args: []string{"read", url, "test://readme"}, out: "line one\nline two\n"},
				{args: []string{"read", url, "test://logo"}, out: "[resource test://logo, image/png, 2.0 KiB of binary data]\n"},
				{args: []string{"read", url, "test://item/7"}, out: "item 7\n"},
				{args: []string{"prompts", url}, out: "" +
					"PROMPT  ARGUMENTS    DESCRIPTION\n" +
					"greet   name [tone]  A greeting.\n"},
				{args: []string{"get", url, "greet", "name=Ada", "tone=warm"}, out: "Greets someone.\n\nuser:\n  Say hello to Ada (warm)\n"},
				{args: []string{"get", url, "greet", `{"name":"Bob","tone":"dry"}`}, out: "Greets someone.\n\nuser:\n  Say hello to Bob (dry)\n"},
			}
			for _, tc := range cases {
				code, out, errs := human(t, append(tc.args, "--mode", mode)...)
				if code != tc.code || out != tc.out || !strings.Contains(errs, tc.errs) {
					t.Errorf("%v: exit %d (want %d)\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", tc.args[0:1], code, tc.code, out, tc.out, errs)
				}
				if tc.errs == "" && errs != "" {
					t.Errorf("%v: stderr %q", tc.args[0:1], errs)
				}
			}
			// Only levels at and above the one asked for are sent.
			if _, _, errs := human(t, "call", url, "slow", "--mode", mode, "--log-level", "debug"); !strings.Contains(errs, "mcpfn: log [debug] slow: a debug message\n") {
				t.Errorf("--log-level debug: stderr %q", errs)
			}
			if _, _, errs := human(t, "call", url, "slow", "--mode", mode, "--log-level", "none"); strings.Contains(errs, "log [") {
				t.Errorf("--log-level none: stderr %q", errs)
			}
			code, out, _ := human(t, "discover", url, "--mode", mode)
			proto := "protocol      2026-07-28 (the server speaks 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26)\n"
			if mode == "legacy" {
				proto = "protocol      2025-11-25\nsession       "
			}
			if code != 0 || !strings.HasPrefix(out, "server        human-test 1.2.3\n"+proto) ||
				!strings.Contains(out, "capabilities  logging, prompts (listChanged), resources (listChanged, subscribe), tools (listChanged)\n") ||
				!strings.HasSuffix(out, "instructions:\n  Use echo.\n  Then weather.\n") {
				t.Errorf("discover: exit %d\n%s", code, out)
			}
		})
	}
}

// TestOutputModes: --json on a terminal and a pipe without flags give the
// one JSON document; --human gives text on a pipe; the two flags exclude
// each other.
func TestOutputModes(t *testing.T) {
	t.Parallel()
	url := humanServer(t)
	code, out, errs := human(t, "call", url, "echo", `{"s":"hi"}`, "--json")
	var doc struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Content) != 1 || doc.Content[0].Text != "echo:hi" || errs != "" {
		t.Errorf("--json on a terminal: exit %d %q %q", code, out, errs)
	}
	// A pipe: the JSON document, and no log or progress lines on stderr.
	code, out, errs = mcpfn(t, "", "call", url, "slow")
	if code != 0 || !strings.HasPrefix(out, `{"`) || errs != "" {
		t.Errorf("piped: exit %d %q %q", code, out, errs)
	}
	code, pipedTools, _ := mcpfn(t, "", "tools", url)
	if code != 0 || !strings.HasPrefix(pipedTools, `{"tools":[`) {
		t.Errorf("piped tools: %d %q", code, pipedTools)
	}
	var b, e bytes.Buffer
	code = run(context.Background(), []string{"tools", url, "--human"}, strings.NewReader(""), &b, &e)
	// On a pipe (a pager) the width is unknown: nothing is cut.
	if code != 0 || !strings.HasPrefix(b.String(), "TOOL     ARGUMENTS  DESCRIPTION\n") || !strings.Contains(b.String(), "slow                "+strings.TrimSpace(strings.Repeat("A long description. ", 20))+"\n") {
		t.Errorf("--human on a pipe: %d %q %q", code, b.String(), e.String())
	}
	if code, out, _ := human(t, "tools", url, "--json", "--human"); code != exitUsage || out != "" {
		t.Errorf("--json --human: exit %d %q", code, out)
	}
	// JSON output of the new commands: the documents the help describes.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"resources", url}, `{"resources":[{"uri":"test://readme"`},
		{[]string{"prompts", url}, `{"prompts":[{"name":"greet"`},
		{[]string{"read", url, "test://readme"}, `"text":"line one\nline two\n"`},
		{[]string{"get", url, "greet", "name=Ada"}, `"text":"Say hello to Ada ()"`},
	} {
		if code, out, errs := mcpfn(t, "", tc.args...); code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d %s %s", tc.args[0], code, out, errs)
		}
	}
	code, out, _ = mcpfn(t, "", "resources", url)
	if code != 0 || !strings.Contains(out, `"resourceTemplates":[{"uriTemplate":"test://item/{id}"`) {
		t.Errorf("resources: %d %s", code, out)
	}
}

// TestVersionHelp: --version names the module version and the protocol
// revisions; --help exits 0 on stdout and lists the exit codes.
func TestVersionHelp(t *testing.T) {
	t.Parallel()
	code, out, _ := mcpfn(t, "", "--version")
	var v struct {
		Name             string   `json:"name"`
		Version          string   `json:"version"`
		ProtocolVersions []string `json:"protocolVersions"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.Name != "mcpfn" || v.Version != moduleVersion() || len(v.ProtocolVersions) != 4 || v.ProtocolVersions[0] != "2026-07-28" {
		t.Errorf("--version: %d %s", code, out)
	}
	if code, out, _ := human(t, "--version"); code != 0 || !strings.HasPrefix(out, "mcpfn "+moduleVersion()+" (go") {
		t.Errorf("--version on a terminal: %d %q", code, out)
	}
	for _, flag := range []string{"--help", "-h", "-help"} {
		var o, e bytes.Buffer
		code := run(context.Background(), []string{flag}, strings.NewReader(""), &o, &e)
		out, errs := o.String(), e.String()
		if code != 0 || errs != "" || !strings.Contains(out, "exit status:\n  0  success\n  1  the tool reported an error (isError)\n  2  usage") || !strings.Contains(out, "  3  failure") {
			t.Errorf("%s: exit %d stdout %q stderr %q", flag, code, out, errs)
		}
		for _, cmd := range []string{"discover", "tools", "call", "resources", "read", "prompts", "get", "package lambda"} {
			if !strings.Contains(out, "mcpfn [flags] "+cmd+" ") && !strings.Contains(out, "mcpfn "+cmd+" ") {
				t.Errorf("%s does not show %s", flag, cmd)
			}
		}
	}
}

// TestBadURL: a URL that cannot be an MCP endpoint is a usage error that
// says what is wrong, before anything is sent; a path other than /mcp is
// only a hint shown when the command fails.
func TestBadURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ url, want string }{
		{"localhost:8080/mcp", `has no scheme: did you mean http://localhost:8080/mcp?`},
		{"127.0.0.1:8080/mcp", `has no scheme: did you mean http://127.0.0.1:8080/mcp?`},
		{"example.com/mcp", `has no scheme: did you mean https://example.com/mcp?`},
		{"tools", `has no scheme: use http://HOST/mcp or https://HOST/mcp`},
		{"ftp://example.com/mcp", `has scheme "ftp": MCP over Streamable HTTP needs http:// or https://`},
		{"ws://example.com/mcp", `has scheme "ws"`},
		{"http:///mcp", `has no host: use http://HOST/mcp`},
		{"https://", `has no host`},
		{"http://host:99999/mcp", `has an invalid port "99999"`},
		{"http://exa mple.com/mcp", `is not valid`},
		{"", `the URL is empty`},
	} {
		code, out, errs := mcpfn(t, "", "tools", tc.url)
		if code != exitUsage || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: exit %d, stderr %q, want %q", tc.url, code, errs, tc.want)
		}
	}
	// A server on the port but not at the path: the failure, then the hint.
	url := humanServer(t)
	root := strings.TrimSuffix(url, "/mcp")
	code, _, errs := mcpfn(t, "", "tools", root)
	if code != exitFailure || !strings.Contains(errs, "mcpfn: hint: MCP endpoints are usually at /mcp: try "+root+"/mcp\n") {
		t.Errorf("no path: exit %d %q", code, errs)
	}
	code, _, errs = mcpfn(t, "", "tools", root+"/api")
	if code != exitFailure || !strings.Contains(errs, `mcpfn: hint: the URL's path is "/api"; MCP endpoints are usually at /mcp`) {
		t.Errorf("other path: exit %d %q", code, errs)
	}
	// No path hint for a server that could not be reached: the hint that
	// nothing listens there.
	if code, _, errs := mcpfn(t, "", "tools", "http://127.0.0.1:1"); code != exitFailure || strings.Contains(errs, "/mcp") || !strings.Contains(errs, "hint: nothing is listening at 127.0.0.1:1") {
		t.Errorf("unreachable: exit %d %q", code, errs)
	}
	// No hint where the path is right.
	if code, _, errs := mcpfn(t, "", "call", url, "nope"); code != exitFailure || strings.Contains(errs, "hint") {
		t.Errorf("right path: exit %d %q", code, errs)
	}
}

// TestUsageNewCommands: the new commands' argument errors are usage errors
// that send nothing.
func TestUsageNewCommands(t *testing.T) {
	t.Parallel()
	url, posts := server(t)
	for _, args := range [][]string{
		{"read", url},
		{"read", url, "a", "b"},
		{"resources"},
		{"prompts", url, "x"},
		{"get", url},
		{"get", url, "p", "novalue"},
		{"get", url, "p", "=v"},
		{"get", url, "p", "a=1", "a=2"},
		{"get", url, "p", `{"a":{"b":1}}`},
		{"get", url, "p", `{"a":`},
		{"tools", url, "--log-level", "loud"},
		{"tools", url, "-arch", "arm64"},
		{"package", "lambda", "--token", "x"},
		{"package"},
		{"package", "gcf"},
		{"package", "lambda", "a", "b"},
		{"package", "lambda", "-arch", "riscv64"},
	} {
		if code, out, _ := mcpfn(t, "", args...); code != exitUsage || out != "" {
			t.Errorf("%q: exit %d, stdout %q", args, code, out)
		}
	}
	if posts.Load() != 0 {
		t.Fatal("a usage error sent a request")
	}
}
