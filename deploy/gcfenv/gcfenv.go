package gcfenv

import (
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/GoogleCloudPlatform/functions-framework-go/functions"

	"github.com/mcpfn/mcpfn/adapters/gcf"
	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/deploy/mcpfnenv"
	"github.com/mcpfn/mcpfn/store/memory"
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
// nil: the tasks of the Tasks extension run in the instance and live in
// its memory; with MCPFN_MAX_INSTANCES=1 TaskStore is store/memory's
// TaskStore, the same store named, since the one instance's memory is
// every instance's. Load makes no network call. It reads the environment
// on every call and returns new options each time.
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
	if opts.AllowedOrigins, err = mcpfnenv.AllowedOrigins(); err != nil {
		return nil, err
	}
	rs, err := auth.FromEnv(log)
	if err != nil {
		return nil, err
	}
	if rs != nil {
		opts.Authenticator = rs
	}
	if keys, err := mcpfnenv.StateKeys(); err != nil {
		return nil, err
	} else if keys != nil {
		opts.Keys = keys
	}
	if opts.TaskClaimTimeout, err = mcpfnenv.Duration("MCPFN_TASK_CLAIM_TIMEOUT"); err != nil {
		return nil, err
	}
	instances, err := maxInstances()
	if err != nil {
		return nil, err
	}
	if instances == 1 {
		// One instance: its memory is every instance's, and a task it
		// keeps there is readable through any request (the store is the
		// server's default one, named so that adapters/gcf and Handler
		// see that the operator chose it).
		opts.TaskStore = &memory.TaskStore{}
	}
	return opts, nil
}

// Options instruments the server of HandlerWith and StartWith. A nil
// *Options means the zero value, which adds nothing.
type Options struct {
	// Middleware is appended to the loaded ServerOptions.Middleware
	// (after the request record, which core installs outermost): for
	// example otel.Middleware of module github.com/mcpfn/mcpfn/otel, which
	// makes a span and a duration point of every request.
	Middleware []core.Middleware

	// Configure, when not nil, is called with the loaded server options
	// once Middleware is appended, before the server is made: the place
	// for what the environment does not say, such as server instructions,
	// a shared TaskStore or otel.Instrument(so, o) (the middleware and the
	// session observer).
	Configure func(*core.ServerOptions)
}

// Handler returns the HTTP function of an MCP server configured by the
// environment: it is HandlerWith(impl, setup, nil).
func Handler(impl core.Implementation, setup func(*core.Server)) (func(w http.ResponseWriter, r *http.Request), error) {
	return HandlerWith(impl, setup, nil)
}

// HandlerWith returns the HTTP function of an MCP server configured by the
// environment and opts: Load, opts (Middleware appended, then Configure),
// core.NewServer with impl and the options, setup (when not nil) to add
// the tools, resources and prompts, and gcf.Handler. It returns Load's
// error, and an error naming the fix for a server with task tools
// (ToolOptions.TaskSupport) and tasks in the instance's memory unless
// MCPFN_MAX_INSTANCES=1: other instances cannot read them.
//
// See Telemetry in the package documentation for the exporters' batches.
func HandlerWith(impl core.Implementation, setup func(*core.Server), opts *Options) (func(w http.ResponseWriter, r *http.Request), error) {
	so, err := Load()
	if err != nil {
		return nil, err
	}
	if opts != nil {
		so.Middleware = append(so.Middleware, opts.Middleware...)
		if opts.Configure != nil {
			opts.Configure(so)
		}
	}
	srv := core.NewServer(impl, so)
	if setup != nil {
		setup(srv)
	}
	if srv.ServesTasks() && srv.PerProcessTasks() {
		srv.Close()
		return nil, errTasksInMemory
	}
	return gcf.Handler(srv), nil
}

// errTasksInMemory is Handler's refusal of a server with task tools whose
// tasks would live in one of many instances' memory: a poll that reaches
// another instance would get -32602 (unknown task), where the Tasks
// extension makes a task readable as soon as its CreateTaskResult is sent
// (tasks.md §Task Creation). A refusal rather than a warning: a Cloud
// Function that does not start says so at deployment, while a warning
// leaves clients with tasks that vanish at random.
var errTasksInMemory = errors.New("the server has task tools (ToolOptions.TaskSupport), and the kit keeps tasks in the " +
	"instance's memory, but Cloud Functions run many instances: a tasks/get, tasks/update or tasks/cancel that reaches " +
	"another instance would find no task (-32602); run one instance and say so: max_instance_count = 1 in the mcp-gcf " +
	"Terraform module (it sets MCPFN_MAX_INSTANCES), or --max-instances=1 with MCPFN_MAX_INSTANCES=1; or keep the tasks " +
	"in a store every instance shares: ServerOptions.TaskStore on the options Load returns, served with gcf.Handler")

// Start registers an MCP server configured by the environment as the HTTP
// function entryPoint: it is StartWith(entryPoint, impl, setup, nil).
func Start(entryPoint string, impl core.Implementation, setup func(*core.Server)) {
	StartWith(entryPoint, impl, setup, nil)
}

// StartWith registers an MCP server configured by the environment and
// opts as the HTTP function entryPoint (the --entry-point of gcloud
// functions deploy, and FUNCTION_TARGET locally) with the Functions
// Framework: it is functions.HTTP(entryPoint, HandlerWith(impl, setup,
// opts)). Call it from init. A configuration error is written to stderr,
// naming the variable, and ends the process with status 1: the instance
// fails to start, with the message in the function's logs.
func StartWith(entryPoint string, impl core.Implementation, setup func(*core.Server), opts *Options) {
	h, err := HandlerWith(impl, setup, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gcfenv: %s: %v\n", impl.Name, err)
		os.Exit(1)
	}
	functions.HTTP(entryPoint, h)
}
