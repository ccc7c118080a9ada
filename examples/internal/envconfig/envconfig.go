package envconfig

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	awssm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/store/dynamo"
	"github.com/mcpfn/mcpfn/store/secretsmanager"
)

// Load returns the server options the environment describes (see the
// package documentation): Logger, SessionStore, Keys and AllowedOrigins.
// With no variable set, the options are the in-memory defaults with an info
// logger. It returns an error for a malformed value; it makes no AWS call.
// The AWS configuration, when a variable needs one, comes from the SDK's
// default chain (environment, shared files, SSO, IMDS...).
func Load(ctx context.Context) (*core.ServerOptions, error) {
	return LoadWith(ctx, func(ctx context.Context) (aws.Config, error) { return config.LoadDefaultConfig(ctx) })
}

// LambdaAWSConfig is the AWS configuration a Lambda function gets from its
// environment (AWS_REGION and the execution role's AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), without the SDK's config
// package, whose profile, SSO and IMDS support a function does not need:
// using it with LoadWith keeps about 2 MB out of the bootstrap.
func LambdaAWSConfig(context.Context) (aws.Config, error) {
	id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if id == "" || secret == "" {
		return aws.Config{}, errors.New("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set (outside Lambda, use Load)")
	}
	return aws.Config{
		Region:      os.Getenv("AWS_REGION"),
		Credentials: credentials.NewStaticCredentialsProvider(id, secret, os.Getenv("AWS_SESSION_TOKEN")),
	}, nil
}

// LoadWith is Load with the AWS configuration from awsConfig. Endpoint
// overrides in AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_SECRETS_MANAGER
// apply either way.
func LoadWith(ctx context.Context, awsConfig func(context.Context) (aws.Config, error)) (*core.ServerOptions, error) {
	var level slog.Level
	if v := os.Getenv("MCPFN_LOG_LEVEL"); v != "" {
		if err := level.UnmarshalText([]byte(v)); err != nil {
			return nil, fmt.Errorf("MCPFN_LOG_LEVEL: %w", err)
		}
	}
	var h slog.Handler = slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})
	if os.Getenv("AWS_LAMBDA_LOG_FORMAT") == "JSON" { // set by Lambda for JSON log format
		h = slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level})
	}
	log := slog.New(h)
	opts := &core.ServerOptions{Logger: log}

	for o := range strings.SplitSeq(os.Getenv("MCPFN_ALLOWED_ORIGINS"), ",") {
		if o = strings.TrimSpace(o); o != "" {
			opts.AllowedOrigins = append(opts.AllowedOrigins, o)
		}
	}

	authn, err := authFromEnv(log)
	if err != nil {
		return nil, err
	}
	if authn != nil {
		opts.Authenticator = authn
	}

	table, secretID, stateKey := os.Getenv("MCPFN_DYNAMODB_TABLE"), os.Getenv("MCPFN_KEYS_SECRET_ID"), os.Getenv("MCPFN_STATE_KEY")
	if secretID != "" && stateKey != "" {
		return nil, errors.New("MCPFN_KEYS_SECRET_ID and MCPFN_STATE_KEY are both set: use one")
	}
	if stateKey != "" {
		secret, err := base64.StdEncoding.DecodeString(stateKey)
		if err != nil {
			return nil, fmt.Errorf("MCPFN_STATE_KEY: not standard base64: %w", err)
		}
		if len(secret) < core.MinKeyBytes {
			return nil, fmt.Errorf("MCPFN_STATE_KEY: %d bytes, at least %d required", len(secret), core.MinKeyBytes)
		}
		opts.Keys = core.StaticKeys{{ID: "env", Secret: secret}}
	}
	if table == "" && secretID == "" {
		return opts, nil
	}

	cfg, err := awsConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	if table != "" {
		opts.SessionStore, err = dynamo.New(dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
			if u := os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"); u != "" {
				o.BaseEndpoint = &u
			}
		}), &dynamo.Options{TableName: table, Logger: log})
		if err != nil {
			return nil, fmt.Errorf("MCPFN_DYNAMODB_TABLE: %w", err)
		}
	}
	if secretID != "" {
		opts.Keys, err = secretsmanager.New(awssm.NewFromConfig(cfg, func(o *awssm.Options) {
			if u := os.Getenv("AWS_ENDPOINT_URL_SECRETS_MANAGER"); u != "" {
				o.BaseEndpoint = &u
			}
		}), secretID, &secretsmanager.Options{Logger: log})
		if err != nil {
			return nil, fmt.Errorf("MCPFN_KEYS_SECRET_ID: %w", err)
		}
	}
	return opts, nil
}
