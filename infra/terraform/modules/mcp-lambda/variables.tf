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
  description = "Path of the deployment package: a zip holding the `bootstrap` executable built for the provided.al2023 runtime and var.architecture (examples/lambda/build.sh writes one). Read at plan time; `terraform validate` does not need it."
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
  description = "Who may call the Function URL (and the REST API's method): AWS_IAM (the default) requires SigV4-signed requests from principals allowed lambda:InvokeFunctionUrl (the REST API: execute-api:Invoke); NONE makes the endpoint public, for an OAuth-protected server that checks bearer tokens itself."
  type        = string
  default     = "AWS_IAM"

  validation {
    condition     = contains(["NONE", "AWS_IAM"], var.authorization_type)
    error_message = "authorization_type must be NONE or AWS_IAM."
  }
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
  description = "Extra environment variables of the function. The variables this module sets (MCPFN_DYNAMODB_TABLE, MCPFN_KEYS_SECRET_ID, MCPFN_STATE_KEY, MCPFN_STREAMING, MCPFN_ALLOWED_ORIGINS, MCPFN_LOG_LEVEL) are refused: use the module's variables."
  type        = map(string)
  default     = {}

  validation {
    condition = alltrue([for k in keys(var.environment) : !contains([
      "MCPFN_DYNAMODB_TABLE", "MCPFN_KEYS_SECRET_ID", "MCPFN_STATE_KEY", "MCPFN_STREAMING", "MCPFN_ALLOWED_ORIGINS", "MCPFN_LOG_LEVEL",
    ], k)])
    error_message = "environment must not set the variables the module wires (MCPFN_DYNAMODB_TABLE, MCPFN_KEYS_SECRET_ID, MCPFN_STATE_KEY, MCPFN_STREAMING, MCPFN_ALLOWED_ORIGINS, MCPFN_LOG_LEVEL)."
  }
}

# The session table (store/dynamo).

variable "table_name" {
  description = "Name of the DynamoDB table of legacy MCP sessions (store/dynamo). null: \"<name>-sessions\"."
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

variable "secret_name" {
  description = "Name of the Secrets Manager secret holding the HMAC keys that seal requestState (store/secretsmanager). null: \"<name>/state-keys\"."
  type        = string
  default     = null

  validation {
    condition     = var.secret_name == null ? true : can(regex("^[A-Za-z0-9/_+=.@-]{1,512}$", var.secret_name))
    error_message = "secret_name must be 1 to 512 characters of A-Z, a-z, 0-9 and /_+=.@-."
  }
}

variable "create_initial_key" {
  description = "Whether Terraform puts the secret's first version, a random 32-byte key in the format store/secretsmanager reads ({\"key\":\"<base64>\"}); the key is then in the Terraform state. false: the operator puts the first version (aws secretsmanager put-secret-value) before the function's first request."
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
  description = "ARN of a customer managed KMS key encrypting the secret; the function is then granted kms:Decrypt on it. null: the AWS managed key aws/secretsmanager."
  type        = string
  default     = null
}

variable "rotation_lambda_arn" {
  description = "ARN of a Secrets Manager rotation function for the secret (its createSecret step must put {\"key\":\"<base64 of 32 random bytes>\"} as AWSPENDING; it needs its own permission for secretsmanager.amazonaws.com to invoke it). null: no automatic rotation; rotate with put-secret-value."
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
