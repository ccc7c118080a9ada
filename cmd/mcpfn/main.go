// Command mcpfn is a command-line MCP client for Streamable HTTP servers of
// either era (2026-07-28, or the initialize-based 2025 revisions), and the
// packager of Go functions for AWS Lambda and Cloudflare Workers.
//
//	mcpfn discover URL            what the server offers: its server/discover
//	                              (or initialize) result
//	mcpfn tools URL               every tool, across all pages: {"tools":[...]}
//	mcpfn call URL NAME [JSON]    the CallToolResult of one call
//	mcpfn resources URL           every resource and resource template:
//	                              {"resources":[...],"resourceTemplates":[...]}
//	mcpfn read URL URI            the ReadResourceResult of one resource
//	mcpfn prompts URL             every prompt: {"prompts":[...]}
//	mcpfn get URL NAME [ARGS]     the GetPromptResult of one prompt; ARGS are
//	                              its arguments: NAME=VALUE words, or one
//	                              JSON object {"name":"value",...}
//	mcpfn stdio URL               a stdio MCP server that bridges to URL:
//	                              desktop hosts spawn it (see stdio.go)
//	mcpfn logout URL              forget the --oauth login saved for URL
//	                              (tokencache.go)
//	mcpfn package lambda [-arch arm64|amd64] [-o FILE.zip] [PATH]
//	                              a provided.al2023 deployment package of the
//	                              main package at PATH (default: .)
//	mcpfn package workers [-o DIR] [-name NAME] [-dev-key] [PATH]
//	                              a Cloudflare Worker directory (app.wasm, Go's
//	                              wasm_exec.js, the glue, wrangler.toml and
//	                              workerd.capnp) of the main package at PATH
//	mcpfn new DIR [-target lambda|gcf|workers|http] [-module PATH]
//	                              a new module in DIR: a typed tool, its test,
//	                              the target's entry point and what it deploys
//	                              with
//	mcpfn completion bash|zsh|fish
//	                              a shell completion script of the
//	                              commands and flags
//	mcpfn dev [-addr HOST:PORT] [-target lambda|gcf|workers|http] [-dynalite] [DIR]
//	                              runs the package in DIR behind its platform's
//	                              door on this machine, prints its URL, and
//	                              rebuilds it when a .go file changes (dev.go)
//	mcpfn --version | --help
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
//	--timeout D                 bound the whole command, OAuth, elicitation
//	                            and builds included (default 10m; 0: none)
//	--session ID                legacy: use this existing session (no
//	                            initialize, no DELETE at the end)
//	--no-initialize             legacy: no session at all (each request
//	                            stands alone)
//	--insecure                  allow --token or an Authorization header
//	                            over plain http to a non-loopback host
//	--json                      print the JSON document even on a terminal
//	--human                     print text for people even when piped
//	--log-level LEVEL           ask for the server's log messages at LEVEL
//	                            and above (debug ... emergency, or none;
//	                            default info for text output, none for JSON)
//	-arch, -o                   package lambda: the architecture (arm64, the
//	                            default, or amd64) and the zip to write
//	                            (default lambda-ARCH.zip)
//	-o, -name, -dev-key         package workers: the directory to write
//	                            (default dist), the Worker's name (default:
//	                            the package directory's name), and a
//	                            generated MCPFN_STATE_KEY in workerd.capnp
//
// Output has two modes. When stdout is a terminal, mcpfn prints text for
// people: tools, resources and prompts as tables, results as their text,
// structured content as indented JSON, images, audio and binary resources
// summarised, and the server's progress and log notifications on stderr.
// A tool that answers with a task (the Tasks extension) is waited for; each
// change of the task's status is shown on stderr, in either mode, and an
// interrupt or --timeout cancels the task.
// Piped, or with --json, stdout carries exactly one JSON document, the
// server's result as received; diagnostics go to stderr.
// Elicitations are asked on the terminal (stdin/stderr) unless --answer is
// given: form fields one by one, URLs shown in full and never opened.
// Server text never reaches the terminal as control characters: on stderr
// and in text output C0/C1 controls, DEL, invalid UTF-8 and bidirectional
// overrides are shown escaped (\x1b, \u202e), and in the JSON document they
// are \u escapes.
// Exit status: 0 success, 1 the tool reported an error (isError), 2 usage
// (a bad command line or URL), 3 failure. Listing what a server does not
// offer at all (tools, resources or prompts: the list method answered
// -32601) is a success: an empty list, and a note on stderr.
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
	"strconv"
	"strings"
	"sync"
	"syscall"
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

const usage = `usage: mcpfn [flags] discover|tools|resources|prompts URL
       mcpfn [flags] call URL TOOL [JSON-OBJECT]
       mcpfn [flags] read URL URI
       mcpfn [flags] get URL PROMPT [NAME=VALUE... | JSON-OBJECT]
       mcpfn [flags] stdio URL
       mcpfn logout URL
       mcpfn package lambda [-arch arm64|amd64] [-o FILE.zip] [PATH]
       mcpfn package workers [-o DIR] [-name NAME] [-dev-key] [PATH]
       mcpfn new DIR [-target lambda|gcf|workers|http] [-module PATH]
       mcpfn completion bash|zsh|fish
       mcpfn dev [-addr HOST:PORT] [-target lambda|gcf|workers|http] [-dynalite] [DIR]
       mcpfn --version | --help
run mcpfn --help for the flags, the output modes and the exit codes
`

const help = `mcpfn: a command-line client for MCP servers over Streamable HTTP (2026-07-28
and the 2025 revisions), and the packager of Go functions for AWS Lambda and
Cloudflare Workers.

commands:
  mcpfn [flags] discover URL           what the server offers (server/discover, or
                                       initialize for a 2025 server)
  mcpfn [flags] tools URL              the tools: name, arguments, description
  mcpfn [flags] call URL TOOL [JSON]   call a tool; JSON is an object of arguments
  mcpfn [flags] resources URL          the resources and resource templates
  mcpfn [flags] read URL URI           read a resource
  mcpfn [flags] prompts URL            the prompts and their arguments
  mcpfn [flags] get URL PROMPT [ARGS]  get a prompt; ARGS are its arguments, as
                                       NAME=VALUE words (topic='zip files') or one
                                       JSON object of strings ({"topic":"zip files"})
  mcpfn [flags] stdio URL              serve MCP on stdin/stdout (as desktop hosts spawn
                                       servers) and bridge every message to URL, in the
                                       era the host speaks (2026-07-28 relayed as is; a
                                       2025 session kept with the server, or translated
                                       for a 2026-07-28-only one); flags: --mode, --header,
                                       --token, --oauth, --insecure, --timeout (per request)
  mcpfn logout URL                     forget the --oauth login saved for URL (the token
                                       cache: os.UserCacheDir()/mcpfn/oauth, or
                                       $MCPFN_OAUTH_CACHE; off: no cache)
  mcpfn package lambda [-arch arm64|amd64] [-o FILE.zip] [PATH]
                                       cross-compile the main package at PATH (default:
                                       the current directory) for the provided.al2023
                                       runtime with the go command on PATH, and write a
                                       reproducible zip holding bootstrap (default
                                       lambda-ARCH.zip; arm64 is the default)
  mcpfn package workers [-o DIR] [-name NAME] [-dev-key] [PATH]
                                       compile the main package at PATH (default: the
                                       current directory) to js/wasm with the go command
                                       on PATH, and write a Worker directory (default
                                       dist): app.wasm, Go's wasm_exec.js, the adapter's
                                       glue, wrangler.toml (npx wrangler deploy) and
                                       workerd.capnp (npx workerd serve), reproducibly
  mcpfn new DIR [-target lambda|gcf|workers|http] [-module PATH]
                                       a new Go module in DIR (which must not exist or
                                       be empty): one typed tool (tools.go), its test
                                       (tools_test.go, both eras, in process), the
                                       target's entry point (default target http) and
                                       what it deploys with (infra/ with Terraform for
                                       lambda and gcf); then go mod tidy. -module sets
                                       the module path (default: DIR's name)
  mcpfn completion bash|zsh|fish       a completion script of the commands and flags
                                       for the shell: source <(mcpfn completion bash)
                                       in ~/.bashrc, likewise zsh (after compinit);
                                       mcpfn completion fish >
                                       ~/.config/fish/completions/mcpfn.fish
  mcpfn dev [-addr HOST:PORT] [-target lambda|gcf|workers|http] [-dynalite] [DIR]
                                       run the package in DIR (default: the current
                                       directory) on this machine behind its platform's
                                       door, print "mcpfn dev: serving URL" once it
                                       serves, and rebuild and restart it when a .go file
                                       of its module changes (a failed build leaves the
                                       last good one serving). lambda: the function run
                                       on the Lambda Runtime API behind a Function URL
                                       (responses streamed), with a local Secrets
                                       Manager key secret, sessions in memory or with
                                       -dynalite in dynalite; gcf: the Functions
                                       Framework's server; workers: workerd; http: the
                                       program with -addr. The target is the one the
                                       package imports (deploy/lambdaenv,
                                       adapters/lambda, deploy/gcfenv, adapters/gcf,
                                       adapters/workers, adapters/nethttp) unless
                                       -target says; -addr defaults to 127.0.0.1:8080
  mcpfn --version                      this program's version and the protocol
                                       revisions it speaks
  mcpfn --help                         this text

URL is the server's MCP endpoint, an http or https URL, usually ending in /mcp
(http://127.0.0.1:8080/mcp).

flags (before or after the command word):
  --mode auto|modern|legacy   the protocol era (default auto: ask the server)
  --header 'Name: value'      an extra HTTP header (repeatable; also -H)
  --token TOKEN               a bearer token
  --oauth                     authorize with OAuth in the browser (loopback redirect)
  --answer A                  answer elicitations without asking: accept, decline,
                              cancel, or a JSON object to accept with (repeatable:
                              one per elicitation, the last one repeats)
  --timeout DURATION          bound the whole command (default 10m; 0: none)
  --session ID                2025 servers: use this existing session
  --no-initialize             2025 servers: no session at all
  --insecure                  allow a credential over plain http to a remote host
  --json                      print the JSON document even on a terminal
  --human                     print text for people even when piped
  --log-level LEVEL           ask for the server's log messages at LEVEL and above:
                              debug, info, notice, warning, error, critical, alert,
                              emergency, or none (default: info for text output,
                              none for JSON); they are printed on stderr
  -arch arm64|amd64           package lambda: the architecture (default arm64)
  -o FILE.zip                 package lambda: the zip to write (default lambda-ARCH.zip)
  -o DIR                      package workers: the directory to write (default dist)
  -name NAME                  package workers: the Worker's name (default: the package
                              directory's name, as lower case letters, digits, hyphens)
  -dev-key                    package workers: put a generated MCPFN_STATE_KEY in
                              workerd.capnp, for local runs only
  -target TARGET              new: lambda, gcf, workers or http (default http)
  -module PATH                new: the module path (default: DIR's name)

output:
  On a terminal, text for people: tools, resources and prompts as tables, results
  as their text, structured content as indented JSON, images, audio and binary
  resources summarised; the server's progress and log messages on stderr (--human:
  the same when piped, for a pager). Piped, or with --json: exactly one JSON
  document on stdout, the server's result as received ({"tools":[...]} for tools,
  {"prompts":[...]} for prompts, {"resources":[...],"resourceTemplates":[...]} for
  resources, the zip's name, size and sha256 for package lambda, the files and
  the wasm's size for package workers). Diagnostics and
  elicitation prompts always go to stderr, and so does each status change of a task
  a tool answers with (the call waits for it; an interrupt or --timeout cancels
  it). Server text never reaches the terminal as control characters: they are
  shown escaped (\x1b).

exit status:
  0  success
  1  the tool reported an error (isError)
  2  usage: a bad command line, flag or URL (nothing was sent)
  3  failure: the server was unreachable or answered with an error, the build
     failed, the zip could not be written, or --timeout ran out
  tools, resources and prompts of a server that offers none at all (its list
  method is not found, -32601) print an empty list and exit 0, with a note on
  stderr
`

// defaultTimeout bounds a whole command unless --timeout says otherwise:
// long enough for a browser login (the authorization code lives at most
// ten minutes, RFC 6749 §4.1.2), for slow tools and for a cold build, short
// enough that a server streaming events forever does not hold a script.
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
	json     bool   // --json: the JSON document even on a terminal
	human    bool   // --human: text for people even when piped
	logLevel string // "" unset, "none", or an mcp.LoggingLevel
	version  bool
	help     bool
	arch     string // package lambda
	out      string // package lambda and workers
	name     string // package workers
	devKey   bool   // package workers
	target   string // new
	module   string // new
	// set records the flags given, by canonical name, for the checks of
	// which command takes which.
	set  map[string]bool
	args []string
}

// Flags that only some commands take.
var (
	packageFlags = []string{"arch", "o", "name", "dev-key"}
	newFlags     = []string{"target", "module"}
	serverFlags  = []string{"mode", "header", "token", "oauth", "answer", "session", "no-initialize", "insecure", "log-level"}
)

func parseArgs(argv []string) (*config, error) {
	cfg := &config{header: http.Header{}, timeout: defaultTimeout, set: map[string]bool{}}
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
				return "", fmt.Errorf("flag -%s needs a value", name)
			}
			i++
			return argv[i], nil
		}
		switch name {
		case "H":
			name = "header"
		case "output":
			name = "o"
		case "h":
			name = "help"
		}
		cfg.set[name] = true
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
		case "header":
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
		case "json":
			cfg.json = true
		case "human":
			cfg.human = true
		case "version":
			cfg.version = true
		case "help":
			cfg.help = true
		case "log-level":
			v, err := needVal()
			if err != nil {
				return nil, err
			}
			if v != "none" && !validLevel(v) {
				return nil, fmt.Errorf("--log-level must be debug, info, notice, warning, error, critical, alert, emergency or none, not %q", v)
			}
			cfg.logLevel = v
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
		case "arch":
			v, err := needVal()
			if err != nil {
				return nil, err
			}
			cfg.arch = v
		case "name":
			v, err := needVal()
			if err != nil {
				return nil, err
			}
			cfg.name = v
		case "dev-key":
			cfg.devKey = true
		case "target":
			v, err := needVal()
			if err != nil {
				return nil, err
			}
			cfg.target = v
		case "module":
			v, err := needVal()
			if err != nil {
				return nil, err
			}
			cfg.module = v
		case "o":
			v, err := needVal()
			if err != nil {
				return nil, err
			}
			if v == "" {
				return nil, errors.New("-o needs a file name")
			}
			cfg.out = v
		default:
			return nil, fmt.Errorf("unknown flag %s", a)
		}
	}
	return cfg, nil
}

func validLevel(v string) bool {
	switch mcp.LoggingLevel(v) {
	case mcp.LevelDebug, mcp.LevelInfo, mcp.LevelNotice, mcp.LevelWarning,
		mcp.LevelError, mcp.LevelCritical, mcp.LevelAlert, mcp.LevelEmergency:
		return true
	}
	return false
}

func parseAnswer(v string) (*mcp.ElicitResult, error) {
	switch v {
	case mcp.ActionAccept, mcp.ActionDecline, mcp.ActionCancel:
		return &mcp.ElicitResult{Action: v}, nil
	}
	if strings.HasPrefix(strings.TrimSpace(v), "{") {
		if err := jsonObjectError("--answer", v); err != nil {
			return nil, err
		}
	}
	var content map[string]any
	if err := json.Unmarshal([]byte(v), &content); err != nil || content == nil {
		return nil, fmt.Errorf("--answer must be accept, decline, cancel or a JSON object, not %q", v)
	}
	return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: content}, nil
}

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
	// On a terminal, the progress of a request is shown as it comes.
	var callOpts []client.CallOption
	if human {
		callOpts = append(callOpts, client.WithProgress(func(p client.Progress) { writeProgress(stderr, p) }))
	}
	var doc json.RawMessage
	text := writeRaw
	code := exitOK
	// absent names what the server does not offer at all (tools, resources
	// or prompts): the list is empty, and said so on stderr.
	absent := ""
	switch a[0] {
	case "discover":
		switch {
		case c.Discovery() != nil:
			doc = c.Discovery().Raw
		case c.InitializeResult() != nil && c.InitializeResult().Raw != nil:
			doc = c.InitializeResult().Raw
		default:
			d, err := c.Discover(ctx)
			if err != nil {
				return fail(err)
			}
			doc = d.Raw
		}
		text = func(w *bufio.Writer, doc json.RawMessage) { writeDiscover(w, c, doc) }
	case "tools":
		raws, err := listAll(ctx, c, "tools")
		if notOffered(err) {
			raws, err = []json.RawMessage{}, nil
			absent = "tools"
		}
		if err != nil {
			return fail(err)
		}
		doc, _ = json.Marshal(struct {
			Tools []json.RawMessage `json:"tools"`
		}{raws})
		text = func(w *bufio.Writer, _ json.RawMessage) { writeTools(w, e.width, raws) }
	case "resources":
		raws, err := listAll(ctx, c, "resources")
		if notOffered(err) {
			raws, err = []json.RawMessage{}, nil
			absent = "resources"
		}
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
		raws, err := listAll(ctx, c, "prompts")
		if notOffered(err) {
			raws, err = []json.RawMessage{}, nil
			absent = "prompts"
		}
		if err != nil {
			return fail(err)
		}
		doc, _ = json.Marshal(struct {
			Prompts []json.RawMessage `json:"prompts"`
		}{raws})
		text = func(w *bufio.Writer, _ json.RawMessage) { writePrompts(w, e.width, raws) }
	case "call":
		r, err := c.CallTool(ctx, a[2], args, append(callOpts, client.WithRawResult(&doc),
			client.WithTaskStatus(func(t *mcp.DetailedTask) { writeTaskStatus(stderr, t) }))...)
		if err != nil {
			return fail(err)
		}
		if r.IsError {
			code = exitIsError
		}
		text = writeCallResult
	case "read":
		if _, err := c.ReadResource(ctx, a[2], append(callOpts, client.WithRawResult(&doc))...); err != nil {
			return fail(err)
		}
		text = writeReadResult
	case "get":
		if _, err := c.GetPrompt(ctx, a[2], promptArgs, append(callOpts, client.WithRawResult(&doc))...); err != nil {
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

// writeOut writes the command's output: doc, made terminal-safe, as one
// JSON document; or, for people, what text writes.
func writeOut(stdout io.Writer, human bool, doc json.RawMessage, text func(*bufio.Writer, json.RawMessage)) int {
	if !human {
		out := append([]byte(nil), safeJSON(doc)...)
		if _, err := stdout.Write(append(out, '\n')); err != nil {
			return exitFailure
		}
		return exitOK
	}
	w := bufio.NewWriter(stdout)
	text(w, doc)
	if err := w.Flush(); err != nil {
		return exitFailure
	}
	return exitOK
}

// parsePromptArgs reads the arguments of get: name=value words, or one
// JSON object whose values are strings (2026-07-28 server/prompts §Getting
// a Prompt). In the object, numbers and booleans are taken as their JSON
// text, so that {"count":3} means "3".
func parsePromptArgs(words []string) (map[string]string, error) {
	if s := strings.TrimSpace(words[0]); len(words) > 1 || !strings.HasPrefix(s, "{") {
		out := make(map[string]string, len(words))
		for _, w := range words {
			k, v, ok := strings.Cut(w, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf(`prompt argument %q is not NAME=VALUE (or give one JSON object, such as {"name":"value"})`, w)
			}
			if _, dup := out[k]; dup {
				return nil, fmt.Errorf("prompt argument %q is given twice", k)
			}
			out[k] = v
		}
		return out, nil
	}
	s := words[0]
	if err := jsonObjectError("the prompt arguments", s); err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	json.Unmarshal([]byte(s), &obj)
	out := make(map[string]string, len(obj))
	for k, v := range obj {
		var str string
		if json.Unmarshal(v, &str) == nil {
			out[k] = str
			continue
		}
		var x any
		json.Unmarshal(v, &x)
		switch x.(type) {
		case float64, bool:
			out[k] = string(v)
		default:
			return nil, fmt.Errorf("prompt argument %q must be a string, not %s", k, v)
		}
	}
	return out, nil
}

var clientInfo = clientImpl()

// maxPages bounds the pages a list command follows.
const maxPages = 1000

// listAll returns every entry of a list, across all pages, as the server
// sent it: member is "tools", "resources", "resourceTemplates" or
// "prompts". Tools are those the client keeps (see client.ListToolsPage).
func listAll(ctx context.Context, c *client.Conn, member string) ([]json.RawMessage, error) {
	raws := []json.RawMessage{}
	var cursor *string
	for range maxPages {
		var raw json.RawMessage
		var next *string
		var err error
		switch member {
		case "tools":
			var page *client.ToolsPage
			if page, err = c.ListToolsPage(ctx, cursor); err == nil {
				raws, next = append(raws, page.Raw...), page.NextCursor
			}
		case "resources":
			var page *mcp.ListResourcesResult
			if page, err = c.ListResources(ctx, cursor, client.WithRawResult(&raw)); err == nil {
				next = page.NextCursor
			}
		case "resourceTemplates":
			var page *mcp.ListResourceTemplatesResult
			if page, err = c.ListResourceTemplates(ctx, cursor, client.WithRawResult(&raw)); err == nil {
				next = page.NextCursor
			}
		case "prompts":
			var page *mcp.ListPromptsResult
			if page, err = c.ListPrompts(ctx, cursor, client.WithRawResult(&raw)); err == nil {
				next = page.NextCursor
			}
		}
		if err != nil {
			return nil, err
		}
		if raw != nil {
			// The entries as sent: the member of the raw page.
			var m map[string]json.RawMessage
			var entries []json.RawMessage
			if json.Unmarshal(raw, &m) == nil {
				json.Unmarshal(m[member], &entries)
			}
			raws = append(raws, entries...)
		}
		if next == nil {
			return raws, nil
		}
		cursor = next
	}
	return nil, fmt.Errorf("%s: more than %d pages", member, maxPages)
}

// notOffered reports whether err is the -32601 (method not found) of a
// list method: the server does not offer that kind of thing at all (it
// declares no such capability; 2026-07-28 server/tools §Capabilities and
// likewise for resources and prompts).
func notOffered(err error) bool {
	var re *mcp.Error
	return errors.As(err, &re) && re.Code == mcp.CodeMethodNotFound
}

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

// failure prints err, and the body or JSON-RPC error data it carries, all
// of it server text made safe for the terminal.
func failure(stderr io.Writer, err error) int {
	fmt.Fprintln(stderr, "mcpfn:", multiLine(err.Error()))
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

// lockedWriter serialises the writes of several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
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
	content := map[string]any{}
	// The fields in the server's order (the form's order, as it wrote them).
	for _, n := range orderedNames(req.RequestedSchema, schema.Properties) {
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
