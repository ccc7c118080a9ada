// Command mcpfn is a command-line MCP client for Streamable HTTP servers of
// either era (2026-07-28, or the initialize-based 2025 revisions).
//
//	mcpfn discover URL            the server/discover (or initialize) result
//	mcpfn tools URL               every tool, across all pages: {"tools":[...]}
//	mcpfn call URL NAME [JSON]    the CallToolResult of one call
//
// Flags, accepted before or after the command word:
//
//	--mode auto|modern|legacy   protocol era (default auto)
//	--header 'K: V'             extra HTTP header (repeatable)
//	--token TOKEN               bearer token
//	--oauth                     authorize with OAuth: browser + loopback redirect
//	--answer A                  answer elicitations without asking: accept,
//	                            decline, cancel, or a JSON object to accept
//	                            with (repeatable: one per elicitation, the
//	                            last one repeats)
//	--timeout D                 bound the whole command, OAuth and
//	                            elicitation included (default 10m; 0: none)
//	--session ID                legacy: use this existing session (no
//	                            initialize, no DELETE at the end)
//	--no-initialize             legacy: no session at all (each request
//	                            stands alone)
//	--insecure                  allow --token or an Authorization header
//	                            over plain http to a non-loopback host
//
// Stdout carries exactly one JSON document; diagnostics go to stderr.
// Elicitations are asked on the terminal (stdin/stderr) unless --answer is
// given: form fields one by one, URLs shown in full and never opened.
// Server text never reaches the terminal as control characters: on stderr
// C0/C1 controls, DEL, invalid UTF-8 and bidirectional overrides are shown
// escaped (\x1b, \u202e), and in the stdout document they are \u escapes.
// Exit status: 0 success, 1 the tool reported an error (isError), 2 usage,
// 3 failure.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/mcp"
)

// Exit statuses.
const (
	exitOK      = 0
	exitIsError = 1
	exitUsage   = 2
	exitFailure = 3
)

// OAuth, when set (by the build that includes client/oauth), returns the
// token source of --oauth for an endpoint.
var OAuth func(ctx context.Context, endpoint string, stderr io.Writer) (client.TokenSource, error)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage: mcpfn [flags] discover URL
       mcpfn [flags] tools URL
       mcpfn [flags] call URL NAME [JSON-OBJECT]
flags (before or after the command word):
  --mode auto|modern|legacy   --header 'K: V' (repeatable)   --token TOKEN   --oauth
  --answer accept|decline|cancel|JSON (repeatable; answers elicitations without asking)
  --timeout DURATION (the whole command; default 10m, 0 = none)
  --session ID | --no-initialize (legacy sessions)   --insecure (credentials over plain http)
`

// defaultTimeout bounds a whole command unless --timeout says otherwise:
// long enough for a browser login (the authorization code lives at most
// ten minutes, RFC 6749 §4.1.2) and for slow tools, short enough that a
// server streaming events forever does not hold a script.
const defaultTimeout = 10 * time.Minute

type config struct {
	mode    client.Mode
	header  http.Header
	token   string
	oauth   bool
	answers []string
	timeout time.Duration
	session string
	noInit  bool
	// insecure allows a credential over plain http to a remote host.
	insecure bool
	args     []string
}

func parseArgs(argv []string) (*config, error) {
	cfg := &config{header: http.Header{}, timeout: defaultTimeout}
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			cfg.args = append(cfg.args, argv[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			cfg.args = append(cfg.args, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		needVal := func() (string, error) {
			if hasVal {
				return val, nil
			}
			if i+1 >= len(argv) {
				return "", fmt.Errorf("flag --%s needs a value", name)
			}
			i++
			return argv[i], nil
		}
		switch name {
		case "mode":
			v, err := needVal()
			if err != nil {
				return nil, err
			}
			switch v {
			case "auto":
				cfg.mode = client.ModeAuto
			case "modern":
				cfg.mode = client.ModeModern
			case "legacy":
				cfg.mode = client.ModeLegacy
			default:
				return nil, fmt.Errorf("--mode must be auto, modern or legacy, not %q", v)
			}
		case "header", "H":
			v, err := needVal()
			if err != nil {
				return nil, err
			}
			k, hv, ok := strings.Cut(v, ":")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, fmt.Errorf("--header wants 'Name: value', got %q", v)
			}
			cfg.header.Add(strings.TrimSpace(k), strings.TrimSpace(hv))
		case "token":
			v, err := needVal()
			if err != nil {
				return nil, err
			}
			cfg.token = v
		case "oauth":
			cfg.oauth = true
		case "session":
			v, err := needVal()
			if err != nil {
				return nil, err
			}
			cfg.session = v
		case "no-initialize":
			cfg.noInit = true
		case "insecure":
			cfg.insecure = true
		case "timeout":
			v, err := needVal()
			if err != nil {
				return nil, err
			}
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return nil, fmt.Errorf("--timeout wants a duration such as 30s or 5m (0: none), not %q", v)
			}
			cfg.timeout = d
		case "answer":
			v, err := needVal()
			if err != nil {
				return nil, err
			}
			if _, err := parseAnswer(v); err != nil {
				return nil, err
			}
			cfg.answers = append(cfg.answers, v)
		case "h", "help":
			return nil, errHelp
		default:
			return nil, fmt.Errorf("unknown flag %s", a)
		}
	}
	return cfg, nil
}

var errHelp = errors.New("help")

func parseAnswer(v string) (*mcp.ElicitResult, error) {
	switch v {
	case mcp.ActionAccept, mcp.ActionDecline, mcp.ActionCancel:
		return &mcp.ElicitResult{Action: v}, nil
	}
	var content map[string]any
	if err := json.Unmarshal([]byte(v), &content); err != nil || content == nil {
		return nil, fmt.Errorf("--answer must be accept, decline, cancel or a JSON object, not %q", v)
	}
	return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: content}, nil
}

func run(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) int {
	stderr = safeWriter{stderr}
	cfg, err := parseArgs(argv)
	if err != nil {
		if err != errHelp {
			fmt.Fprintln(stderr, "mcpfn:", err)
		}
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	a := cfg.args
	bad := func(msg string) int {
		fmt.Fprintln(stderr, "mcpfn:", msg)
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	if len(a) == 0 {
		return bad("missing command")
	}
	var args json.RawMessage
	switch a[0] {
	case "discover", "tools":
		if len(a) != 2 {
			return bad(a[0] + " takes one URL")
		}
	case "call":
		if len(a) < 3 || len(a) > 4 {
			return bad("call takes URL NAME [JSON-OBJECT]")
		}
		if len(a) == 4 {
			args = json.RawMessage(a[3])
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
				return bad("the arguments must be a JSON object")
			}
		}
	default:
		return bad("unknown command " + strconv.Quote(a[0]))
	}
	if cfg.oauth && cfg.token != "" {
		return bad("--oauth and --token exclude each other")
	}
	if cfg.session != "" && cfg.noInit {
		return bad("--session and --no-initialize exclude each other")
	}
	if (cfg.token != "" || cfg.header.Get("Authorization") != "") && !cfg.insecure && cleartextRemote(a[1]) {
		return bad("refusing to send a credential over plain http to " + a[1] + ": use https, or --insecure")
	}
	if cfg.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.timeout)
		defer cancel()
	}
	fail := func(err error) int {
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("timed out after %v (--timeout): %w", cfg.timeout, err)
		}
		return failure(stderr, err)
	}
	url := a[1]
	opts := &client.Options{Mode: cfg.mode, Header: cfg.header, ClientInfo: clientInfo,
		SessionID: cfg.session, NoInitialize: cfg.noInit,
		// Warnings (e.g. tools dropped for invalid x-mcp-header) go to stderr.
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	switch {
	case cfg.token != "":
		opts.TokenSource = client.StaticToken(cfg.token)
	case cfg.oauth:
		if OAuth == nil {
			return bad("--oauth is not available in this build")
		}
		ts, err := OAuth(ctx, url, stderr)
		if err != nil {
			return fail(err)
		}
		opts.TokenSource = ts
	}
	e := &elicitor{answers: cfg.answers, in: stdin, out: stderr}
	opts.Elicitation = e.elicit
	opts.ElicitationURL = true
	opts.ElicitationDefaults = true

	c, err := client.Connect(ctx, url, opts)
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	var doc json.RawMessage
	code := exitOK
	switch a[0] {
	case "discover":
		switch {
		case c.Discovery() != nil:
			doc = c.Discovery().Raw
		case c.InitializeResult() != nil:
			doc = c.InitializeResult().Raw
		default:
			d, err := c.Discover(ctx)
			if err != nil {
				return fail(err)
			}
			doc = d.Raw
		}
	case "tools":
		raws, err := toolEntries(ctx, c)
		if err != nil {
			return fail(err)
		}
		doc, _ = json.Marshal(struct {
			Tools []json.RawMessage `json:"tools"`
		}{raws})
	case "call":
		r, err := c.CallTool(ctx, a[2], args, client.WithRawResult(&doc))
		if err != nil {
			return fail(err)
		}
		if r.IsError {
			code = exitIsError
		}
	}
	out := append([]byte(nil), safeJSON(doc)...)
	if _, err := stdout.Write(append(out, '\n')); err != nil {
		return exitFailure
	}
	return code
}

var clientInfo = clientImpl()

// maxToolPages bounds the tools/list pages the tools command follows.
const maxToolPages = 1000

// toolEntries returns the entry of every tool the client keeps, across all
// pages, as the server sent it.
func toolEntries(ctx context.Context, c *client.Conn) ([]json.RawMessage, error) {
	raws := []json.RawMessage{}
	var cursor *string
	for range maxToolPages {
		page, err := c.ListToolsPage(ctx, cursor)
		if err != nil {
			return nil, err
		}
		raws = append(raws, page.Raw...)
		if page.NextCursor == nil {
			return raws, nil
		}
		cursor = page.NextCursor
	}
	return nil, fmt.Errorf("tools/list: more than %d pages", maxToolPages)
}

// failure prints err, and the body or JSON-RPC error data it carries, all
// of it server text made safe for the terminal.
// cleartextRemote reports whether endpoint is a plain-http URL whose host is
// not a loopback one: a bearer credential sent there crosses the network in
// clear (2026-07-28 basic/authorization §Communication Security: HTTPS
// except on loopback). Hosts are not resolved: a name is remote unless it
// is localhost.
func cleartextRemote(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil || !strings.EqualFold(u.Scheme, "http") {
		return false
	}
	h := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return false
	}
	ip := net.ParseIP(h)
	return ip == nil || !ip.IsLoopback()
}

func failure(stderr io.Writer, err error) int {
	fmt.Fprintln(stderr, "mcpfn:", oneLine(err.Error()))
	var he *client.HTTPError
	if errors.As(err, &he) && len(he.Body) > 0 {
		fmt.Fprintf(stderr, "mcpfn: response body: %s\n", multiLine(string(he.Body)))
	}
	var re *mcp.Error
	if errors.As(err, &re) && len(re.Data) > 0 {
		fmt.Fprintf(stderr, "mcpfn: error data: %s\n", compactJSON(re.Data))
	}
	return exitFailure
}

// elicitor answers elicitations: from --answer values, else on the
// terminal.
type elicitor struct {
	mu      sync.Mutex
	answers []string
	n       int
	in      io.Reader
	lines   chan string // lines of in, read by one goroutine from the first prompt on
	out     io.Writer
}

func (e *elicitor) elicit(ctx context.Context, req *client.ElicitRequest) (*mcp.ElicitResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	fmt.Fprintf(e.out, "mcpfn: the server asks (%s): %s\n", oneLine(req.Mode), multiLine(req.Message))
	if req.Mode == "url" {
		fmt.Fprintf(e.out, "mcpfn: URL (not opened by mcpfn): %s\n", oneLine(req.URL))
	}
	if len(e.answers) > 0 {
		i := min(e.n, len(e.answers)-1)
		e.n++
		r, err := parseAnswer(e.answers[i])
		if err != nil {
			return nil, err
		}
		if req.Mode == "url" && r.Action == mcp.ActionAccept {
			r.Content = nil
		}
		fmt.Fprintf(e.out, "mcpfn: answered %s (--answer)\n", r.Action)
		return r, nil
	}
	if req.Mode == "url" {
		fmt.Fprint(e.out, "Open this URL yourself and continue? [y = accept, n = decline, c = cancel]: ")
		v, err := e.line(ctx)
		if err != nil {
			return nil, err
		}
		switch v {
		case "y", "yes":
			return &mcp.ElicitResult{Action: mcp.ActionAccept}, nil
		case "n", "no":
			return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
		}
		return &mcp.ElicitResult{Action: mcp.ActionCancel}, nil
	}
	fmt.Fprint(e.out, "Answer? [y = fill the form, n = decline, c = cancel]: ")
	v, err := e.line(ctx)
	if err != nil {
		return nil, err
	}
	switch v {
	case "y", "yes":
	case "n", "no":
		return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
	default:
		return &mcp.ElicitResult{Action: mcp.ActionCancel}, nil
	}
	var schema struct {
		Properties map[string]struct {
			Type        string          `json:"type"`
			Description string          `json:"description"`
			Default     json.RawMessage `json:"default"`
			Enum        []any           `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	json.Unmarshal(req.RequestedSchema, &schema)
	names := make([]string, 0, len(schema.Properties))
	for n := range schema.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	content := map[string]any{}
	for _, n := range names {
		p := schema.Properties[n]
		fmt.Fprintf(e.out, "  %s (%s)", oneLine(n), oneLine(p.Type))
		if p.Description != "" {
			fmt.Fprintf(e.out, " - %s", oneLine(p.Description))
		}
		if len(p.Enum) > 0 {
			enum, _ := json.Marshal(p.Enum)
			fmt.Fprintf(e.out, " %s", compactJSON(enum))
		}
		if p.Default != nil {
			fmt.Fprintf(e.out, " [default %s]", compactJSON(p.Default))
		}
		fmt.Fprint(e.out, ": ")
		v, err := e.line(ctx)
		if err != nil {
			return nil, err
		}
		if v == "" {
			continue // defaults are filled in by the client
		}
		switch p.Type {
		case "integer", "number", "boolean":
			var x any
			if json.Unmarshal([]byte(v), &x) == nil {
				content[n] = x
				continue
			}
		}
		content[n] = v
	}
	return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: content}, nil
}

// line reads the user's next line, or gives up when ctx ends (--timeout):
// one goroutine reads stdin for the life of the process, so a prompt left
// unanswered does not hold the command.
func (e *elicitor) line(ctx context.Context) (string, error) {
	if e.lines == nil {
		e.lines = make(chan string)
		go func(r *bufio.Reader) {
			defer close(e.lines)
			for {
				s, err := r.ReadString('\n')
				if s != "" || err == nil {
					e.lines <- strings.TrimSpace(s)
				}
				if err != nil {
					return
				}
			}
		}(bufio.NewReader(e.in))
	}
	select {
	case s := <-e.lines:
		return s, nil // "" at the end of stdin
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
