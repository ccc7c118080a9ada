package lambdaenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	awssm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/deploy/mcpfnenv"
	"github.com/mcpfn/mcpfn/store/dynamo"
	"github.com/mcpfn/mcpfn/store/secretsmanager"
)

// Config is what the environment describes, as the options of the
// packages it configures. Load returns a new Config on every call; the
// caller may change it before use.
type Config struct {
	// Server holds Logger, AllowedOrigins, Authenticator (MCPFN_AUTH_*),
	// SessionStore and TaskStore (MCPFN_DYNAMODB_TABLE), TaskRunner
	// (MCPFN_TASK_RUNNER, and its default on Lambda), TaskClaimTimeout
	// (MCPFN_TASK_CLAIM_TIMEOUT) and Keys (MCPFN_KEYS_SECRET_ID or
	// MCPFN_STATE_KEY); the fields the environment does not set are zero.
	// Pass it to core.NewServer.
	Server *core.ServerOptions
	// Lambda holds Streaming (MCPFN_STREAMING) and the same Logger. Pass
	// it to lambda.Start or lambda.Wrap.
	Lambda *lambda.Options

	// taskRunner is the kind MCPFN_TASK_RUNNER names (or its default),
	// for Start's check of the server's task tools.
	taskRunner string
}

// Options configures Load. A nil *Options means the zero value.
type Options struct {
	// AWSConfig loads the AWS configuration of the DynamoDB and Secrets
	// Manager clients; it is called only when MCPFN_DYNAMODB_TABLE or
	// MCPFN_KEYS_SECRET_ID is set. Nil means LambdaAWSConfig. Outside
	// Lambda, pass the SDK's default chain:
	//
	//	func(ctx context.Context) (aws.Config, error) { return config.LoadDefaultConfig(ctx) }
	AWSConfig func(context.Context) (aws.Config, error)

	// Middleware is appended to Config.Server.Middleware (after the
	// request record, which core installs outermost): for example
	// otel.Middleware of module github.com/mcpfn/mcpfn/otel, which makes
	// a span and a duration point of every request.
	Middleware []core.Middleware

	// Flush is appended to Config.Lambda.Flush: what adapters/lambda
	// flushes at the end of every invocation, once the response has been
	// sent and before Lambda freezes the sandbox, so that spans and metrics
	// batched during an invocation leave with it. The OpenTelemetry SDK's
	// *trace.TracerProvider and *metric.MeterProvider are lambda.Flushers;
	// the kit itself links no OpenTelemetry.
	Flush []lambda.Flusher

	// FlushTimeout is Config.Lambda.FlushTimeout: the bound of each
	// flush, never past the invocation's deadline. Zero means
	// lambda.DefaultFlushTimeout (2 seconds).
	FlushTimeout time.Duration

	// Configure, when not nil, is called with the configuration once the
	// environment, Middleware and Flush have set it, before Load returns
	// it (and so before StartWith makes the server): the place for what
	// the environment does not say, such as server instructions or
	// otel.Instrument(cfg.Server, o) (the middleware and the session
	// observer).
	Configure func(*Config)
}

// apply sets what o adds to the environment's configuration.
func (o *Options) apply(cfg *Config) {
	cfg.Server.Middleware = append(cfg.Server.Middleware, o.Middleware...)
	cfg.Lambda.Flush = append(cfg.Lambda.Flush, o.Flush...)
	cfg.Lambda.FlushTimeout = o.FlushTimeout
	if o.Configure != nil {
		o.Configure(cfg)
	}
}

// Load returns the options the environment describes (see the package
// documentation for every variable). With no MCPFN_ variable set, they are
// the in-memory defaults with an info-level logger on stderr. A variable
// that is malformed, or set without the one it needs, is an error naming
// it. Load makes no network call: the clients it builds connect on first
// use. It reads the environment on every call.
func Load(ctx context.Context, opts *Options) (*Config, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.AWSConfig == nil {
		o.AWSConfig = LambdaAWSConfig
	}
	cfg, err := load(ctx, &o)
	if err != nil {
		return nil, err
	}
	o.apply(cfg)
	return cfg, nil
}

// load is Load up to Options.apply.
func load(ctx context.Context, o *Options) (*Config, error) {
	// Lambda sets AWS_LAMBDA_LOG_FORMAT=JSON when the function's log format
	// is JSON; CloudWatch then expects one JSON object a line, with the
	// field names of lambdacontext.ReplaceAttr (timestamp, message).
	log, err := newLogger(os.Stderr, os.Getenv("AWS_LAMBDA_LOG_FORMAT") == "JSON")
	if err != nil {
		return nil, err
	}
	streaming, err := mcpfnenv.Bool("MCPFN_STREAMING")
	if err != nil {
		return nil, err
	}
	cfg := &Config{
		Server: &core.ServerOptions{Logger: log},
		Lambda: &lambda.Options{Streaming: streaming, Logger: log},
	}
	if cfg.Server.AllowedOrigins, err = mcpfnenv.AllowedOrigins(); err != nil {
		return nil, err
	}
	rs, err := auth.FromEnv(log)
	if err != nil {
		return nil, err
	}
	if rs != nil {
		cfg.Server.Authenticator = rs
	}

	table, secretID := os.Getenv("MCPFN_DYNAMODB_TABLE"), os.Getenv("MCPFN_KEYS_SECRET_ID")
	if secretID != "" && os.Getenv("MCPFN_STATE_KEY") != "" {
		return nil, errors.New("MCPFN_KEYS_SECRET_ID and MCPFN_STATE_KEY are both set: use one (MCPFN_KEYS_SECRET_ID in production)")
	}
	if keys, err := mcpfnenv.StateKeys(); err != nil {
		return nil, err
	} else if keys != nil {
		cfg.Server.Keys = keys
	}
	runner, err := taskRunnerKind(table)
	if err != nil {
		return nil, err
	}
	cfg.taskRunner = runner
	if cfg.Server.TaskClaimTimeout, err = mcpfnenv.Duration("MCPFN_TASK_CLAIM_TIMEOUT"); err != nil {
		return nil, err
	}
	if table == "" && secretID == "" {
		return cfg, nil
	}

	awsCfg, err := o.AWSConfig(ctx)
	if err != nil {
		names := "MCPFN_DYNAMODB_TABLE needs"
		if table == "" {
			names = "MCPFN_KEYS_SECRET_ID needs"
		} else if secretID != "" {
			names = "MCPFN_DYNAMODB_TABLE and MCPFN_KEYS_SECRET_ID need"
		}
		return nil, fmt.Errorf("loading the AWS configuration %s: %w", names, err)
	}
	if table != "" {
		client := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
			if u := endpoint("AWS_ENDPOINT_URL_DYNAMODB"); u != "" {
				o.BaseEndpoint = &u
			}
		})
		dopts := &dynamo.Options{TableName: table, Logger: log}
		cfg.Server.SessionStore, err = dynamo.New(client, dopts)
		if err != nil {
			return nil, fmt.Errorf("MCPFN_DYNAMODB_TABLE: %w", err)
		}
		// The tasks of the Tasks extension share the session table
		// (their own key prefix; see store/dynamo).
		cfg.Server.TaskStore, err = dynamo.NewTaskStore(client, dopts)
		if err != nil {
			return nil, fmt.Errorf("MCPFN_DYNAMODB_TABLE: %w", err)
		}
		// So do the change notifications of the instances (one item; see
		// dynamo.ChangeBus).
		if cfg.Server.ChangeBus, err = dynamo.NewChangeBus(client, dopts); err != nil {
			return nil, fmt.Errorf("MCPFN_DYNAMODB_TABLE: %w", err)
		}
		if cfg.Server.TaskRunner, err = taskRunner(ctx, runner, awsCfg, log); err != nil {
			return nil, err
		}
	}
	if secretID != "" {
		client := awssm.NewFromConfig(awsCfg, func(o *awssm.Options) {
			if u := endpoint("AWS_ENDPOINT_URL_SECRETS_MANAGER"); u != "" {
				o.BaseEndpoint = &u
			}
		})
		cfg.Server.Keys, err = secretsmanager.New(client, secretID, &secretsmanager.Options{Logger: log})
		if err != nil {
			return nil, fmt.Errorf("MCPFN_KEYS_SECRET_ID: %w", err)
		}
	}
	return cfg, nil
}

// endpoint returns the service's endpoint override: the service-specific
// variable, else AWS_ENDPOINT_URL, else "" (the AWS endpoint).
func endpoint(name string) string {
	if u := os.Getenv(name); u != "" {
		return u
	}
	return os.Getenv("AWS_ENDPOINT_URL")
}

// LambdaAWSConfig is the AWS configuration a Lambda function gets from its
// environment: AWS_REGION and the execution role's AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, which Lambda sets. It does
// without the SDK's config package (profiles, SSO, IMDS), which keeps about
// 2 MB out of the bootstrap. It returns an error naming the variables when
// the credentials or the region are missing (outside Lambda: use
// Options.AWSConfig).
func LambdaAWSConfig(context.Context) (aws.Config, error) {
	id, secret, region := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_REGION")
	if id == "" || secret == "" {
		return aws.Config{}, errors.New("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set (Lambda sets them; outside Lambda, set lambdaenv.Options.AWSConfig)")
	}
	if region == "" {
		return aws.Config{}, errors.New("AWS_REGION is not set (Lambda sets it)")
	}
	return aws.Config{
		Region:      region,
		Credentials: credentials.NewStaticCredentialsProvider(id, secret, os.Getenv("AWS_SESSION_TOKEN")),
	}, nil
}

// Start runs an MCP server configured by the environment as the Lambda
// function of this process: it is StartWith(impl, setup, nil).
func Start(impl core.Implementation, setup func(*core.Server)) {
	StartWith(impl, setup, nil)
}

// StartWith runs an MCP server configured by the environment and opts as
// the Lambda function of this process: it calls Load(opts), core.NewServer
// with impl and the loaded server options, setup (when not nil) to add the
// tools, resources and prompts, and lambda.Start with the loaded Lambda
// options. StartWith never returns. A configuration error is written to
// stderr, naming the variable, and ends the process with status 1, which
// Lambda reports as an init error (Runtime.ExitError) with the message in
// the function's logs. So does a server with task tools
// (ToolOptions.TaskSupport) that the environment cannot run safely: on
// Lambda without MCPFN_DYNAMODB_TABLE or with MCPFN_TASK_RUNNER=inprocess
// (Lambda freezes the invocation that created a task), and anywhere with
// MCPFN_TASK_RUNNER=none.
//
// opts instruments the function: Options.Middleware wraps every request
// (otel.Middleware for spans and metrics), Options.Flush is flushed at the
// end of every invocation (the OpenTelemetry SDK's tracer and meter
// providers), and Options.Configure changes anything else the
// environment does not say (server instructions, otel.Instrument).
func StartWith(impl core.Implementation, setup func(*core.Server), opts *Options) {
	srv, lopts, err := newServer(context.Background(), impl, setup, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "lambdaenv: %s: %v\n", impl.Name, err)
		os.Exit(1)
	}
	lambda.Start(srv, lopts)
}

// newServer is StartWith up to lambda.Start: it also refuses a server
// whose task tools the deployment cannot run safely (checkTasks).
func newServer(ctx context.Context, impl core.Implementation, setup func(*core.Server), opts *Options) (*core.Server, *lambda.Options, error) {
	cfg, err := Load(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	srv := core.NewServer(impl, cfg.Server)
	if setup != nil {
		setup(srv)
	}
	if err := checkTasks(srv, cfg.taskRunner); err != nil {
		srv.Close()
		return nil, nil, err
	}
	return srv, cfg.Lambda, nil
}
