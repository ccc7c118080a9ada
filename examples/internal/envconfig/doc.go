// Package envconfig turns the environment into [core.ServerOptions] for the
// examples. Library packages never read the environment; a program's main
// does, and this is the code to copy into yours.
//
// # Variables
//
//	MCPFN_DYNAMODB_TABLE   DynamoDB table of legacy sessions (store/dynamo), shared
//	                       by every instance. Unset: sessions live in the process.
//	MCPFN_KEYS_SECRET_ID   Secrets Manager secret (name or ARN) holding the keys
//	                       that seal requestState (store/secretsmanager). This is
//	                       how production shares and rotates keys.
//	MCPFN_STATE_KEY        A fixed key instead: base64 of at least 32 random bytes
//	                       (openssl rand -base64 32). For tests and local
//	                       development only: it never rotates, and it sits in the
//	                       function's configuration. At most one of the two key
//	                       variables may be set; with neither, each process
//	                       generates its own key, and state sealed by one
//	                       instance does not open on another.
//	MCPFN_ALLOWED_ORIGINS  Comma-separated browser origins accepted
//	                       (https://app.example.com,...), or "*"; see
//	                       core.ServerOptions.AllowedOrigins. Unset: loopback and
//	                       same-origin only.
//	MCPFN_AUTH_RESOURCE    The canonical URI of the MCP endpoint as clients use it
//	                       (https://…/mcp): set, the server is an OAuth 2.1
//	                       protected resource (package auth) trusting the JWT
//	                       access tokens of MCPFN_AUTH_ISSUER (its JWKS from
//	                       MCPFN_AUTH_JWKS_URL or its metadata), requiring the
//	                       space-separated MCPFN_AUTH_SCOPES. Behind a stage prefix
//	                       or a Cloud Functions gen1 URL, MCPFN_AUTH_METADATA_URL
//	                       (and MCPFN_AUTH_METADATA_PATH) say where the metadata
//	                       document is (auth.Options.MetadataURL, MetadataPath).
//	MCPFN_LOG_LEVEL        debug, info (the default), warn or error. Logs go to
//	                       stderr (CloudWatch Logs on Lambda, Cloud Logging on GCF),
//	                       as text, or as JSON when Lambda's log format is JSON
//	                       (AWS_LAMBDA_LOG_FORMAT=JSON).
//
// Load gives the AWS clients the default configuration chain
// (config.LoadDefaultConfig): the region from AWS_REGION, credentials from
// the function's role or the shared files, and endpoints overridden by
// AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_DYNAMODB or
// AWS_ENDPOINT_URL_SECRETS_MANAGER (DynamoDB Local, dynalite, LocalStack).
// LoadWith(ctx, LambdaAWSConfig) reads only what Lambda puts in a function's
// environment (AWS_REGION and the role's credentials), which keeps the SDK's
// config package, and about 2 MB, out of a Lambda bootstrap; the
// service-specific endpoint variables still apply. The configuration is
// loaded only when a variable needs it.
package envconfig
