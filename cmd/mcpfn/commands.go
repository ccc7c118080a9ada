package main

// The CLI's table of subcommands and flags: runEnv accepts only the
// commands listed here, the completion scripts (completion.go) are
// generated from it, and TestCommandTable checks it against the usage, the
// help and parseArgs, so that none of them drifts from the others.
//
// A new subcommand is one entry in commands (its name, its arguments as
// the usage shows them, a one-line summary, the flags it takes and the
// words its first argument can be), plus its dispatch in runEnv and its
// lines in usage and help. A new flag is one entry in flags, plus its case
// in parseArgs and its line in help.

// flagScope says which commands take a flag.
type flagScope int

const (
	scopeAll     flagScope = iota // every command
	scopeServer                   // the commands that talk to a server (serverFlags)
	scopePackage                  // package lambda and package workers (packageFlags)
	scopeNone                     // commands that take none but the flags of every command
	scopeNew                      // new (newFlags)
)

// command is one subcommand.
type command struct {
	name string
	// args are its arguments, as the usage shows them.
	args string
	// summary is one line for the completion menus of zsh and fish.
	summary string
	// flags are the flags it takes besides those of every command:
	// scopeServer, scopePackage or scopeNone.
	flags flagScope
	// words are what its first argument can be (package: the targets;
	// completion: the shells); nil for a URL or a path.
	words []string
	// dirs: its arguments after the first are directories (package's
	// PATH).
	dirs bool
}

// commands are the CLI's subcommands, in the order the usage lists them.
var commands = []command{
	{name: "discover", args: "URL", summary: "what the server offers", flags: scopeServer},
	{name: "tools", args: "URL", summary: "the tools", flags: scopeServer},
	{name: "call", args: "URL TOOL [JSON]", summary: "call a tool", flags: scopeServer},
	{name: "resources", args: "URL", summary: "the resources and resource templates", flags: scopeServer},
	{name: "read", args: "URL URI", summary: "read a resource", flags: scopeServer},
	{name: "prompts", args: "URL", summary: "the prompts", flags: scopeServer},
	{name: "get", args: "URL PROMPT [ARGS]", summary: "get a prompt", flags: scopeServer},
	{name: "package", args: "lambda|workers [PATH]", summary: "package a Go function for AWS Lambda or Cloudflare Workers",
		flags: scopePackage, words: []string{"lambda", "workers"}, dirs: true},
	{name: "stdio", args: "URL", summary: "a stdio bridge to a Streamable HTTP server, for hosts that spawn servers", flags: scopeServer},
	{name: "logout", args: "URL", summary: "forget the saved --oauth login of a server", flags: scopeNone},
	{name: "new", args: "DIR", summary: "a new Go module: a typed tool, its test, the target's entry point and infra",
		flags: scopeNew, dirs: true},
	// dev parses its own flags (-addr, -target, -dynalite; dev.go).
	{name: "dev", args: "[DIR]", summary: "run the package locally behind its platform's door, rebuilding on changes",
		flags: scopeNone, dirs: true},
	{name: "completion", args: "bash|zsh|fish", summary: "a shell completion script for mcpfn",
		flags: scopeNone, words: shells},
}

// shells are the shells completion writes scripts for.
var shells = []string{"bash", "zsh", "fish"}

// lookupCommand returns the command named name, or nil.
func lookupCommand(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// flagSpec is one flag, as parseArgs takes it: with one dash or two, and a
// value either as the next word or after "=".
type flagSpec struct {
	// name is the canonical name (config.set's key).
	name string
	// aliases are other names parseArgs takes for it.
	aliases []string
	// long: the help writes it with two dashes (--mode); else one (-o).
	long bool
	// value names its value; "" for a switch.
	value string
	// values are the values completion offers (nil: none, or files).
	values []string
	// file: the value is a path.
	file bool
	// scope says which commands take it.
	scope   flagScope
	summary string
}

// flags are the CLI's flags, in the order the help lists them.
var flags = []flagSpec{
	{name: "mode", long: true, value: "MODE", values: []string{"auto", "modern", "legacy"}, scope: scopeServer, summary: "the protocol era"},
	{name: "header", aliases: []string{"H"}, long: true, value: "HEADER", scope: scopeServer, summary: "an extra HTTP header, Name: value"},
	{name: "token", long: true, value: "TOKEN", scope: scopeServer, summary: "a bearer token"},
	{name: "oauth", long: true, scope: scopeServer, summary: "authorize with OAuth in the browser"},
	{name: "answer", long: true, value: "ANSWER", values: []string{"accept", "decline", "cancel"}, scope: scopeServer, summary: "answer elicitations without asking"},
	{name: "timeout", long: true, value: "DURATION", scope: scopeAll, summary: "bound the whole command"},
	{name: "session", long: true, value: "ID", scope: scopeServer, summary: "2025 servers: use this existing session"},
	{name: "no-initialize", long: true, scope: scopeServer, summary: "2025 servers: no session at all"},
	{name: "insecure", long: true, scope: scopeServer, summary: "allow a credential over plain http to a remote host"},
	{name: "json", long: true, scope: scopeAll, summary: "print the JSON document even on a terminal"},
	{name: "human", long: true, scope: scopeAll, summary: "print text for people even when piped"},
	{name: "log-level", long: true, value: "LEVEL", values: []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency", "none"},
		scope: scopeServer, summary: "the server's log messages at LEVEL and above"},
	{name: "arch", value: "ARCH", values: []string{"arm64", "amd64"}, scope: scopePackage, summary: "package lambda: the architecture"},
	{name: "o", aliases: []string{"output"}, value: "PATH", file: true, scope: scopePackage, summary: "the zip or directory to write"},
	{name: "name", value: "NAME", scope: scopePackage, summary: "package workers: the Worker's name"},
	{name: "dev-key", scope: scopePackage, summary: "package workers: a generated MCPFN_STATE_KEY for local runs"},
	{name: "target", value: "TARGET", values: newTargets, scope: scopeNew, summary: "new: lambda, gcf, workers or http"},
	{name: "module", value: "PATH", scope: scopeNew, summary: "new: the module path"},
	{name: "version", long: true, scope: scopeAll, summary: "this program's version"},
	{name: "help", aliases: []string{"h"}, long: true, scope: scopeAll, summary: "the help"},
}

// spellings are the ways the help and the completions write f: its name
// with its dashes, then its aliases (one dash for one letter, else as the
// name).
func (f *flagSpec) spellings() []string {
	dash := func(n string, long bool) string {
		if long && len(n) > 1 {
			return "--" + n
		}
		return "-" + n
	}
	out := []string{dash(f.name, f.long)}
	for _, a := range f.aliases {
		out = append(out, dash(a, f.long))
	}
	return out
}

// takes reports whether c takes f.
func (c *command) takes(f *flagSpec) bool {
	return f.scope == scopeAll || f.scope == c.flags
}
