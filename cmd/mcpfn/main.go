package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"syscall"

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

// Flags that only some commands take.
var (
	packageFlags = []string{"arch", "o", "name", "dev-key"}
	newFlags     = []string{"target", "module"}
	serverFlags  = []string{"mode", "header", "token", "oauth", "answer", "session", "no-initialize", "insecure", "log-level"}
)

// env is what a run of the command works with: its streams, whether
// stdout is a terminal (the text output for people), and for package
// lambda the working directory and environment of the go command.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// tty: stdout is a terminal. Text output unless --json.
	tty bool
	// width is the terminal's width in columns; 0 means unknown (tables are
	// then not cut).
	width int
	// dir is the working directory of package lambda; "" means the
	// process's.
	dir string
	// environ is the environment of the go command package lambda runs;
	// nil means the process's.
	environ []string
}

func run(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	if f, ok := stdout.(*os.File); ok {
		e.tty = isTerminal(f)
		if e.tty {
			e.width = terminalWidth(f)
		}
	}
	return runEnv(ctx, argv, e)
}

// runEnv runs one command line in e and returns the exit status.
func runEnv(ctx context.Context, argv []string, e *env) int {
	// The CLI's stderr: server text made safe, and one writer for the
	// goroutines that print on it (notifications, elicitation, logs).
	stderr := &lockedWriter{w: safeWriter{e.stderr}}
	stdout := e.stdout
	if len(argv) > 0 && argv[0] == "dev" { // its own flags, and no --timeout (dev.go)
		return devCmd(ctx, argv[1:], e)
	}
	cfg, err := parseArgs(argv)
	bad := func(msg string) int {
		fmt.Fprintln(stderr, "mcpfn:", msg)
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	if err != nil {
		return bad(err.Error())
	}
	if cfg.json && cfg.human {
		return bad("--json and --human exclude each other")
	}
	human := (e.tty || cfg.human) && !cfg.json
	switch {
	case cfg.help:
		if _, err := io.WriteString(stdout, help); err != nil {
			return exitFailure
		}
		return exitOK
	case cfg.version:
		return writeOut(stdout, human, versionDoc(), writeVersion)
	}
	a := cfg.args
	if len(a) == 0 {
		return bad("missing command")
	}
	if lookupCommand(a[0]) == nil { // commands.go lists every command
		return bad("unknown command " + strconv.Quote(a[0]))
	}
	if a[0] == "stdio" {
		return stdioCmd(ctx, cfg, e, stderr, bad)
	}
	if a[0] == "completion" {
		return completionCmd(cfg, stdout, bad)
	}
	if a[0] == "logout" {
		return logoutCmd(cfg, stderr, bad)
	}
	if cfg.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.timeout)
		defer cancel()
	}
	if a[0] == "new" {
		return newCmd(ctx, cfg, e, stdout, stderr, bad)
	}
	for _, f := range newFlags {
		if cfg.set[f] {
			return bad("-" + f + " is a flag of new")
		}
	}
	if a[0] == "package" {
		for _, f := range serverFlags {
			if cfg.set[f] {
				return bad("--" + f + " is not a flag of package")
			}
		}
		if len(a) >= 2 && a[1] == "workers" {
			return packageWorkersCmd(ctx, cfg, e, stderr, bad)
		}
		if len(a) < 2 || a[1] != "lambda" {
			return bad("package takes a target: package lambda [-arch arm64|amd64] [-o FILE.zip] [PATH], or package workers [-o DIR] [-name NAME] [-dev-key] [PATH]")
		}
		for _, f := range []string{"name", "dev-key"} {
			if cfg.set[f] {
				return bad("-" + f + " is a flag of package workers")
			}
		}
		if len(a) > 3 {
			return bad("package lambda takes one PATH")
		}
		p := lambdaPackage{Arch: cfg.arch, Out: cfg.out, Dir: e.dir, Env: e.environ, Stderr: stderr}
		if len(a) == 3 {
			p.Pkg = a[2]
		}
		if p.Arch == "" {
			p.Arch = "arm64"
		}
		if _, ok := goarch(p.Arch); !ok {
			return bad("-arch must be arm64 or amd64 (x86_64), not " + strconv.Quote(p.Arch))
		}
		res, err := packageLambda(ctx, p)
		if err != nil {
			if ctx.Err() == context.DeadlineExceeded {
				err = fmt.Errorf("timed out after %v (--timeout): %w", cfg.timeout, err)
			}
			return failure(stderr, err)
		}
		doc, _ := json.Marshal(res)
		return writeOut(stdout, human, doc, func(w *bufio.Writer, _ json.RawMessage) { res.writeText(w) })
	}
	for _, f := range packageFlags {
		if cfg.set[f] {
			return bad("-" + f + " is a flag of package")
		}
	}
	var args json.RawMessage
	var promptArgs map[string]string
	switch a[0] {
	case "discover", "tools", "resources", "prompts":
		if len(a) != 2 {
			return bad(a[0] + " takes one URL")
		}
	case "read":
		if len(a) != 3 {
			return bad("read takes URL URI")
		}
	case "call":
		if len(a) < 3 || len(a) > 4 {
			return bad("call takes URL TOOL [JSON-OBJECT]")
		}
		if len(a) == 4 {
			args = json.RawMessage(a[3])
			if err := jsonObjectError("the arguments", a[3]); err != nil {
				return bad(err.Error())
			}
		}
	case "get":
		if len(a) < 3 {
			return bad("get takes URL PROMPT [NAME=VALUE ... | JSON-OBJECT]")
		}
		if len(a) > 3 {
			var err error
			if promptArgs, err = parsePromptArgs(a[3:]); err != nil {
				return bad(err.Error())
			}
		}
	default:
		return bad("unknown command " + strconv.Quote(a[0]))
	}
	endpoint := a[1]
	hint, err := checkEndpoint(endpoint)
	if err != nil {
		return bad(err.Error())
	}
	if cfg.oauth && cfg.token != "" {
		return bad("--oauth and --token exclude each other")
	}
	if cfg.session != "" && cfg.noInit {
		return bad("--session and --no-initialize exclude each other")
	}
	if (cfg.token != "" || cfg.header.Get("Authorization") != "") && !cfg.insecure && cleartextRemote(endpoint) {
		return bad("refusing to send a credential over plain http to " + endpoint + ": use https, or --insecure")
	}
	fail := func(err error) int {
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("timed out after %v (--timeout): %w", cfg.timeout, err)
		}
		code := failure(stderr, err)
		// The hint is for a server that answered: not for one that could
		// not be reached (a *url.Error is the HTTP client's own failure).
		var ue *url.Error
		if hint != "" && ctx.Err() == nil && !errors.As(err, &ue) {
			fmt.Fprintln(stderr, "mcpfn: hint:", hint)
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			fmt.Fprintln(stderr, "mcpfn: hint:", refusedHint(endpoint))
		}
		return code
	}
	opts := &client.Options{Mode: cfg.mode, Header: cfg.header, ClientInfo: clientInfo,
		SessionID: cfg.session, NoInitialize: cfg.noInit,
		// A tool may answer with a task (io.modelcontextprotocol/tasks):
		// the call waits for it, showing its status on stderr, and
		// cancels it when the command is interrupted or times out.
		Tasks: true,
		// Warnings (e.g. tools dropped for invalid x-mcp-header) go to stderr.
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	level := cfg.logLevel
	if level == "" && human {
		level = string(mcp.LevelInfo)
	}
	if level != "" && level != "none" {
		// Log messages are asked for (SEP-2577 deprecates logging in
		// 2026-07-28; servers still send them) and shown on stderr.
		opts.LogLevel = mcp.LoggingLevel(level)
		opts.Notification = func(method string, params json.RawMessage) {
			if method == "notifications/message" {
				writeLog(stderr, params)
			}
		}
	}
	switch {
	case cfg.token != "":
		opts.TokenSource = client.StaticToken(cfg.token)
	case cfg.oauth:
		if OAuth == nil {
			return bad("--oauth is not available in this build")
		}
		ts, err := OAuth(ctx, endpoint, stderr)
		if err != nil {
			return fail(err)
		}
		opts.TokenSource = ts
	}
	el := &elicitor{answers: cfg.answers, in: e.stdin, out: stderr}
	opts.Elicitation = el.elicit
	opts.ElicitationURL = true
	opts.ElicitationDefaults = true

	c, err := client.Connect(ctx, endpoint, opts)
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	// doc is the result as the server sent it; on a terminal, the progress
	// of a request is shown as it comes.
	var doc json.RawMessage
	callOpts := &client.CallOptions{RawResult: &doc}
	if human {
		callOpts.Progress = func(p client.Progress) { writeProgress(stderr, p) }
	}
	text := writeRaw
	code := exitOK
	// absent names what the server does not offer at all (tools, resources
	// or prompts): the list is empty, and said so on stderr.
	absent := ""
	// list lists every item of kind; a server that does not offer kind
	// gives an empty list, and absent names it.
	list := func(kind string) ([]json.RawMessage, error) {
		raws, err := listAll(ctx, c, kind)
		if notOffered(err) {
			raws, err = []json.RawMessage{}, nil
			absent = kind
		}
		return raws, err
	}
	switch a[0] {
	case "discover":
		switch {
		case c.Discovery() != nil:
			doc = c.Discovery().Raw
		case c.InitializeResult() != nil && c.InitializeResult().Raw != nil:
			doc = c.InitializeResult().Raw
		default:
			d, err := c.Discover(ctx, nil)
			if err != nil {
				return fail(err)
			}
			doc = d.Raw
		}
		text = func(w *bufio.Writer, doc json.RawMessage) { writeDiscover(w, c, doc) }
	case "tools":
		raws, err := list("tools")
		if err != nil {
			return fail(err)
		}
		doc, _ = json.Marshal(struct {
			Tools []json.RawMessage `json:"tools"`
		}{raws})
		text = func(w *bufio.Writer, _ json.RawMessage) { writeTools(w, e.width, raws) }
	case "resources":
		raws, err := list("resources")
		if err != nil {
			return fail(err)
		}
		templates := []json.RawMessage{}
		if absent == "" {
			templates, err = listAll(ctx, c, "resourceTemplates")
		}
		if notOffered(err) {
			// A server with resources but no templates may not serve
			// resources/templates/list at all.
			templates, err = []json.RawMessage{}, nil
		}
		if err != nil {
			return fail(err)
		}
		doc, _ = json.Marshal(struct {
			Resources         []json.RawMessage `json:"resources"`
			ResourceTemplates []json.RawMessage `json:"resourceTemplates"`
		}{raws, templates})
		text = func(w *bufio.Writer, _ json.RawMessage) { writeResources(w, e.width, raws, templates) }
	case "prompts":
		raws, err := list("prompts")
		if err != nil {
			return fail(err)
		}
		doc, _ = json.Marshal(struct {
			Prompts []json.RawMessage `json:"prompts"`
		}{raws})
		text = func(w *bufio.Writer, _ json.RawMessage) { writePrompts(w, e.width, raws) }
	case "call":
		callOpts.TaskStatus = func(t *mcp.DetailedTask) { writeTaskStatus(stderr, t) }
		r, err := c.CallTool(ctx, a[2], args, callOpts)
		if err != nil {
			return fail(err)
		}
		if r.IsError {
			code = exitIsError
		}
		text = writeCallResult
	case "read":
		if _, err := c.ReadResource(ctx, a[2], callOpts); err != nil {
			return fail(err)
		}
		text = writeReadResult
	case "get":
		if _, err := c.GetPrompt(ctx, a[2], promptArgs, callOpts); err != nil {
			return fail(err)
		}
		text = writePromptResult
	}
	if absent != "" {
		fmt.Fprintf(stderr, "mcpfn: the server offers no %s (it does not serve %s/list)\n", absent, absent)
	}
	if out := writeOut(stdout, human, doc, text); out != exitOK {
		return out
	}
	if code == exitIsError && human {
		fmt.Fprintln(stderr, "mcpfn: the tool reported an error (isError)")
	}
	return code
}
