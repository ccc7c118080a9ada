# The function.

variable "name" {
  description = "Name of the Lambda function; the default prefix of the table, the secret, the role and the log group."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,64}$", var.name))
    error_message = "name must be a Lambda function name: 1 to 64 characters of A-Z, a-z, 0-9, '-' and '_'."
  }
}

variable "zip_path" {
  description = "Path of the deployment package: a zip holding the `bootstrap` executable built for the provided.al2023 runtime and var.architecture (`mcpfn package lambda -o fn.zip` writes one; -arch amd64 for x86_64). Read at plan time; `terraform validate` does not need it."
  type        = string

  validation {
    condition     = endswith(var.zip_path, ".zip")
    error_message = "zip_path must name a .zip file."
  }
}

variable "architecture" {
  description = "Instruction set of the function and of its bootstrap: arm64 (Graviton, the default; GOARCH=arm64) or x86_64 (GOARCH=amd64)."
  type        = string
  default     = "arm64"

  validation {
    condition     = contains(["arm64", "x86_64"], var.architecture)
    error_message = "architecture must be arm64 or x86_64."
  }
}

variable "memory_size" {
  description = "Memory of the function in MB (CPU grows with it)."
  type        = number
  default     = 256

  validation {
    condition     = var.memory_size >= 128 && var.memory_size <= 10240 && floor(var.memory_size) == var.memory_size
    error_message = "memory_size must be a whole number of MB from 128 to 10240."
  }
}

variable "timeout" {
  description = "Longest run of one invocation, in seconds; it bounds a streamed response (an SSE stream of a long tool call) too, and is the REST API integration's timeout."
  type        = number
  default     = 60

  validation {
    condition     = var.timeout >= 1 && var.timeout <= 900 && floor(var.timeout) == var.timeout
    error_message = "timeout must be a whole number of seconds from 1 to 900."
  }
}

variable "reserved_concurrent_executions" {
  description = "Concurrent executions reserved for (and capping) the function; null leaves the function on the account's unreserved pool. A cap bounds the cost of a public (NONE) URL."
  type        = number
  default     = null

  validation {
    condition     = var.reserved_concurrent_executions == null ? true : var.reserved_concurrent_executions >= 0
    error_message = "reserved_concurrent_executions must be null or at least 0."
  }
}

variable "authorization_type" {
  description = "Who may call the Function URL (and the REST API's method). AWS_IAM (the default: nothing is public until you choose) accepts only SigV4-signed requests from principals allowed lambda:InvokeFunctionUrl (the REST API: execute-api:Invoke): stock MCP clients (Claude, VS Code, the MCP Inspector, the SDKs) cannot sign them, so it suits AWS callers and tests only. NONE makes the endpoint public: set auth with it (the server checks OAuth access tokens), the documented setup for an endpoint MCP clients use; NONE without auth is refused unless allow_unauthenticated = true."
  type        = string
  default     = "AWS_IAM"

  validation {
    condition     = contains(["NONE", "AWS_IAM"], var.authorization_type)
    error_message = "authorization_type must be NONE or AWS_IAM."
  }
}

variable "auth" {
  description = <<-EOT
    The server as an OAuth 2.1 protected resource (package auth), for a public (NONE) endpoint that stock MCP clients can use: they discover the authorization server from the resource's metadata and send its access tokens. null: no token check.
      issuer        the authorization server's issuer URL; its JWT access tokens are accepted (MCPFN_AUTH_ISSUER)
      resource      the canonical URL of the MCP endpoint as clients use it, e.g. "https://mcp.example.com/mcp"; the tokens' audience (MCPFN_AUTH_RESOURCE). Required on a Function URL (its URL is known only after it exists: apply, read function_url, set "<function_url>mcp", apply again, or use a custom domain); null with enable_rest_api: the REST API's stage URL + "/mcp"
      jwks_url      the issuer's JWKS, when its metadata does not name it (MCPFN_AUTH_JWKS_URL)
      scopes        scopes every request needs (MCPFN_AUTH_SCOPES)
      metadata_url  where clients fetch the protected resource metadata, when not at the resource's well-known URL (MCPFN_AUTH_METADATA_URL), and metadata_path, its path as the function sees it (MCPFN_AUTH_METADATA_PATH)
  EOT
  type = object({
    issuer        = string
    resource      = optional(string)
    jwks_url      = optional(string)
    scopes        = optional(list(string), [])
    metadata_url  = optional(string)
    metadata_path = optional(string)
  })
  default = null

  validation {
    condition     = var.auth == null ? true : can(regex("^https://", var.auth.issuer)) && (var.auth.resource == null ? true : can(regex("^https://[^#]+$", var.auth.resource)))
    error_message = "auth.issuer and auth.resource must be https URLs (auth.resource without a fragment)."
  }
}

variable "allow_unauthenticated" {
  description = "Allow authorization_type = \"NONE\" without auth: a public endpoint on which anyone can call every tool, at your cost (bound it with reserved_concurrent_executions). false (the default): that combination is refused at plan time."
  type        = bool
  default     = false
}

variable "streaming" {
  description = "Whether responses stream (SSE): the Function URL's invoke mode RESPONSE_STREAM and the REST API's STREAM integration, and MCPFN_STREAMING=1 (the program starts adapters/lambda with Options.Streaming). false: BUFFERED, MCPFN_STREAMING=0; the whole response is sent at the end (at most 6 MB), and progress notifications arrive with it."
  type        = bool
  default     = true
}

variable "allowed_origins" {
  description = "Browser origins the server accepts (MCPFN_ALLOWED_ORIGINS), e.g. [\"https://app.example.com\"], or [\"*\"]. Empty: same-origin browser requests only; clients that send no Origin header are unaffected. The server answers CORS itself: the Function URL has no CORS configuration."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for o in var.allowed_origins : o == "*" || can(regex("^https?://[^/,]+$", o))])
    error_message = "allowed_origins must hold \"*\" or origins of the form https://host[:port], without a path or a comma."
  }
}

variable "tasks" {
  description = "Whether tasks (the MCP Tasks extension, io.modelcontextprotocol/tasks) run in asynchronous invocations of this function: MCPFN_TASK_RUNNER=lambda, and the role may call lambda:InvokeFunction on this function, and on nothing else. A task then outlives the request that created it; each run of it is bounded by timeout (at most 900 s). Task records share the session table (their own key prefix). true is the default: Lambda freezes the invocation that created a task once its response is sent, so a task cannot run there. false (a server without task tools, for a role that cannot invoke the function): MCPFN_TASK_RUNNER=none, and the deploy kit refuses at init a server that registers task tools, naming this variable."
  type        = bool
  default     = true
}

variable "task_claim_timeout" {
  description = "Seconds a task no run has claimed yet waits for its run (MCPFN_TASK_CLAIM_TIMEOUT, core.ServerOptions.TaskClaimTimeout), apart from the lease of a running task: under throttling (reserved_concurrent_executions) Lambda holds the asynchronous invocation back and retries it, so the task runs late rather than never; past this wait the next request that reads it fails it. From 1 to 21600 (6 hours, the longest Lambda keeps an asynchronous event). null: the deploy kit's default (core.DefaultTaskClaimTimeout, 300 s)."
  type        = number
  default     = null

  validation {
    condition     = var.task_claim_timeout == null ? true : var.task_claim_timeout >= 1 && var.task_claim_timeout <= 21600 && floor(var.task_claim_timeout) == var.task_claim_timeout
    error_message = "task_claim_timeout must be null or a whole number of seconds from 1 to 21600 (6 hours, the longest Lambda keeps an asynchronous event)."
  }
}

variable "log_level" {
  description = "Level of the server's logs (MCPFN_LOG_LEVEL): debug, info, warn or error."
  type        = string
  default     = "info"

  validation {
    condition     = contains(["debug", "info", "warn", "error"], var.log_level)
    error_message = "log_level must be debug, info, warn or error."
  }
}

variable "log_retention_days" {
  description = "Days the function's CloudWatch log group keeps its logs."
  type        = number
  default     = 30

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_days)
    error_message = "log_retention_days must be one of the values CloudWatch Logs accepts: 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288 or 3653."
  }
}

variable "environment" {
  description = "Extra environment variables of the function. The variables this module sets (MCPFN_DYNAMODB_TABLE, MCPFN_KEYS_SECRET_ID, MCPFN_STREAMING, MCPFN_ALLOWED_ORIGINS, MCPFN_LOG_LEVEL, MCPFN_TASK_RUNNER, MCPFN_TASK_CLAIM_TIMEOUT and, with auth, MCPFN_AUTH_RESOURCE, MCPFN_AUTH_ISSUER, MCPFN_AUTH_JWKS_URL, MCPFN_AUTH_SCOPES, MCPFN_AUTH_METADATA_URL, MCPFN_AUTH_METADATA_PATH) and MCPFN_STATE_KEY (a key in the function's configuration) are refused: use the module's variables."
  type        = map(string)
  default     = {}

  validation {
    condition = alltrue([for k in keys(var.environment) : !contains([
      "MCPFN_DYNAMODB_TABLE", "MCPFN_KEYS_SECRET_ID", "MCPFN_STATE_KEY", "MCPFN_STREAMING", "MCPFN_ALLOWED_ORIGINS", "MCPFN_LOG_LEVEL", "MCPFN_TASK_RUNNER", "MCPFN_TASK_CLAIM_TIMEOUT",
      "MCPFN_AUTH_RESOURCE", "MCPFN_AUTH_ISSUER", "MCPFN_AUTH_JWKS_URL", "MCPFN_AUTH_SCOPES", "MCPFN_AUTH_METADATA_URL", "MCPFN_AUTH_METADATA_PATH",
    ], k)])
    error_message = "environment must not set the variables the module wires (MCPFN_DYNAMODB_TABLE, MCPFN_KEYS_SECRET_ID, MCPFN_STATE_KEY, MCPFN_STREAMING, MCPFN_ALLOWED_ORIGINS, MCPFN_LOG_LEVEL, MCPFN_TASK_RUNNER, MCPFN_TASK_CLAIM_TIMEOUT, MCPFN_AUTH_RESOURCE, MCPFN_AUTH_ISSUER, MCPFN_AUTH_JWKS_URL, MCPFN_AUTH_SCOPES, MCPFN_AUTH_METADATA_URL, MCPFN_AUTH_METADATA_PATH): use the module's variables (auth for the token check, tasks for MCPFN_TASK_RUNNER, task_claim_timeout for MCPFN_TASK_CLAIM_TIMEOUT)."
  }
}

# The session table (store/dynamo).

variable "existing_table_arn" {
  description = "ARN of an existing DynamoDB session table to use (with store/dynamo's schema: dynamo.CreateTable, or this module's sessions.tf); the module then creates none, and the role may use that table and its indexes only. null: the module creates the table."
  type        = string
  default     = null

  validation {
    condition     = var.existing_table_arn == null ? true : can(regex("^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:[0-9]{12}:table/[A-Za-z0-9_.-]{3,255}$", var.existing_table_arn))
    error_message = "existing_table_arn must be a DynamoDB table ARN: arn:aws:dynamodb:REGION:ACCOUNT:table/NAME."
  }
}

variable "table_name" {
  description = "Name of the DynamoDB table of legacy MCP sessions (store/dynamo) the module creates. null: \"<name>-sessions\". Not with existing_table_arn."
  type        = string
  default     = null

  validation {
    condition     = var.table_name == null ? true : can(regex("^[A-Za-z0-9_.-]{3,255}$", var.table_name))
    error_message = "table_name must be 3 to 255 characters of A-Z, a-z, 0-9, '_', '-' and '.'."
  }
}

variable "point_in_time_recovery" {
  description = "Whether the session table has point-in-time recovery (continuous backups)."
  type        = bool
  default     = true
}

variable "deletion_protection" {
  description = "Whether the session table is protected from deletion (terraform destroy then fails until it is turned off)."
  type        = bool
  default     = false
}

# The signing keys (store/secretsmanager).

variable "existing_secret_arn" {
  description = "ARN of an existing Secrets Manager secret holding the HMAC keys (each version's SecretString {\"key\":\"<base64 of at least 32 random bytes>\"}); the module then creates none, nor its first version or rotation, and the role may read that secret only. null: the module creates the secret."
  type        = string
  default     = null

  validation {
    condition     = var.existing_secret_arn == null ? true : can(regex("^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@-]+$", var.existing_secret_arn))
    error_message = "existing_secret_arn must be a Secrets Manager secret ARN: arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME-SUFFIX."
  }
}

variable "secret_name" {
  description = "Name of the Secrets Manager secret holding the HMAC keys that seal requestState (store/secretsmanager) the module creates. null: \"<name>/state-keys\". Not with existing_secret_arn."
  type        = string
  default     = null

  validation {
    condition     = var.secret_name == null ? true : can(regex("^[A-Za-z0-9/_+=.@-]{1,512}$", var.secret_name))
    error_message = "secret_name must be 1 to 512 characters of A-Z, a-z, 0-9 and /_+=.@-."
  }
}

variable "create_initial_key" {
  description = "Whether Terraform puts the secret's first version, a random 32-byte key in the format store/secretsmanager reads ({\"key\":\"<base64>\"}); the key is then in the Terraform state. false: the operator puts the first version (aws secretsmanager put-secret-value) before the function's first request. Ignored with existing_secret_arn."
  type        = bool
  default     = true
}

variable "secret_recovery_window_days" {
  description = "Days a deleted secret can be restored: 0 (delete at once) or 7 to 30."
  type        = number
  default     = 7

  validation {
    condition     = var.secret_recovery_window_days == 0 || (var.secret_recovery_window_days >= 7 && var.secret_recovery_window_days <= 30)
    error_message = "secret_recovery_window_days must be 0 or from 7 to 30."
  }
}

variable "secret_kms_key_arn" {
  description = "ARN of a customer managed KMS key encrypting the secret; the function is then granted kms:Decrypt on it. null: the AWS managed key aws/secretsmanager. It applies to an existing_secret_arn too."
  type        = string
  default     = null
}

variable "rotation_lambda_arn" {
  description = "ARN of a Secrets Manager rotation function for the secret (its createSecret step must put {\"key\":\"<base64 of 32 random bytes>\"} as AWSPENDING; it needs its own permission for secretsmanager.amazonaws.com to invoke it). null: no automatic rotation; rotate with put-secret-value. Not with existing_secret_arn."
  type        = string
  default     = null
}

variable "rotation_days" {
  description = "Days between automatic rotations, with rotation_lambda_arn."
  type        = number
  default     = 30

  validation {
    condition     = var.rotation_days >= 1 && var.rotation_days <= 1000 && floor(var.rotation_days) == var.rotation_days
    error_message = "rotation_days must be a whole number from 1 to 1000."
  }
}

# The API Gateway REST API in front (optional).

variable "enable_rest_api" {
  description = "Whether to add an API Gateway REST API in front of the function, streaming (a response-streaming-invocations integration with response_transfer_mode STREAM), for custom domains, WAF, usage plans or resource policies."
  type        = bool
  default     = false
}

variable "rest_api_stage" {
  description = "Stage name of the REST API; the endpoint is https://<id>.execute-api.<region>.amazonaws.com/<stage>/mcp."
  type        = string
  default     = "prod"

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,128}$", var.rest_api_stage))
    error_message = "rest_api_stage must be 1 to 128 characters of A-Z, a-z, 0-9, '-' and '_'."
  }
}

variable "tags" {
  description = "Tags of every resource the module creates."
  type        = map(string)
  default     = {}
}
