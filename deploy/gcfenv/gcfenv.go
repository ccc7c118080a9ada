package gcfenv

import (
	"fmt"
	"net/http"
	"os"

	"github.com/GoogleCloudPlatform/functions-framework-go/functions"

	"github.com/mcpfn/mcpfn/adapters/gcf"
	"github.com/mcpfn/mcpfn/core"
)

// Load returns the server options the environment describes (see the
// package documentation for every variable): Logger, AllowedOrigins,
// Authenticator (MCPFN_AUTH_*) and Keys (MCPFN_STATE_KEY); the fields the
// environment does not set are zero. With no MCPFN_ variable set, they are
// the in-memory defaults with an info-level logger on stderr. A variable
// that is malformed, or set without the one it needs, is an error naming
// it; so is a variable of deploy/lambdaenv that has no meaning here
// (MCPFN_DYNAMODB_TABLE, MCPFN_KEYS_SECRET_ID, MCPFN_STREAMING,
// MCPFN_TASK_RUNNER other than inprocess). TaskStore and TaskRunner stay
// nil: the tasks of the Tasks extension live and run in the instance. Load makes
// no network call. It reads the environment on every call and returns new
// options each time.
func Load() (*core.ServerOptions, error) {
	for _, name := range []string{"MCPFN_DYNAMODB_TABLE", "MCPFN_KEYS_SECRET_ID", "MCPFN_STREAMING"} {
		if os.Getenv(name) != "" {
			return nil, fmt.Errorf("%s is set, but deploy/gcfenv does not read it (Cloud Functions stream and take their key from MCPFN_STATE_KEY; "+
				"for a shared session or task store, set ServerOptions.SessionStore or TaskStore on the options Load returns)", name)
		}
	}
	// Tasks run in the instance (the in-process runner) and live in it
	// (the in-memory TaskStore); a Cloud Function has no asynchronous
	// self-invocation of deploy/lambdaenv's kind.
	switch v := os.Getenv("MCPFN_TASK_RUNNER"); v {
	case "", "inprocess":
	default:
		return nil, fmt.Errorf("MCPFN_TASK_RUNNER: %q is not inprocess, the only task runner of deploy/gcfenv (lambda belongs to deploy/lambdaenv)", v)
	}
	// Cloud Logging reads one JSON object a line as a structured entry
	// with its severity; MCPFN_LOG_FORMAT=text keeps plain lines.
	json := true
	switch v := os.Getenv("MCPFN_LOG_FORMAT"); v {
	case "", "json":
	case "text":
		json = false
	default:
		return nil, fmt.Errorf("MCPFN_LOG_FORMAT: %q is not json or text", v)
	}
	log, err := newLogger(os.Stderr, json)
	if err != nil {
		return nil, err
	}

	opts := &core.ServerOptions{Logger: log}
	if opts.AllowedOrigins, err = allowedOrigins(); err != nil {
		return nil, err
	}
	rs, err := authFromEnv(log)
	if err != nil {
		return nil, err
	}
	if rs != nil {
		opts.Authenticator = rs
	}
	if keys, err := stateKey(); err != nil {
		return nil, err
	} else if keys != nil {
		opts.Keys = keys
	}
	return opts, nil
}

// Handler returns the HTTP function of an MCP server configured by the
// environment: Load, core.NewServer with impl and the loaded options,
// setup (when not nil) to add the tools, resources and prompts, and
// gcf.Handler. It returns Load's error.
func Handler(impl core.Implementation, setup func(*core.Server)) (func(w http.ResponseWriter, r *http.Request), error) {
	opts, err := Load()
	if err != nil {
		return nil, err
	}
	srv := core.NewServer(impl, opts)
	if setup != nil {
		setup(srv)
	}
	return gcf.Handler(srv), nil
}

// Start registers an MCP server configured by the environment as the HTTP
// function entryPoint (the --entry-point of gcloud functions deploy, and
// FUNCTION_TARGET locally) with the Functions Framework: it is
// functions.HTTP(entryPoint, Handler(impl, setup)). Call it from init. A
// configuration error is written to stderr, naming the variable, and ends
// the process with status 1: the instance fails to start, with the
// message in the function's logs.
func Start(entryPoint string, impl core.Implementation, setup func(*core.Server)) {
	h, err := Handler(impl, setup)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gcfenv: %s: %v\n", impl.Name, err)
		os.Exit(1)
	}
	functions.HTTP(entryPoint, h)
}
