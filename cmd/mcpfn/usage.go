package main

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
