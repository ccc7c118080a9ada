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
