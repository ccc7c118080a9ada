variable "zip_path" {
  description = "Your function's deployment package: the zip `mcpfn package lambda -o fn.zip` writes (a `bootstrap` for provided.al2023, arm64 unless architecture says x86_64)."
  type        = string
}

variable "name" {
  description = "Name of the function (and the prefix of its table, secret, role and log group)."
  type        = string
  default     = "my-mcp-server"
}

variable "region" {
  description = "AWS region to deploy to."
  type        = string
  default     = "us-east-1"
}

variable "architecture" {
  description = "arm64 (the default of `mcpfn package lambda`) or x86_64 (`mcpfn package lambda -arch amd64`)."
  type        = string
  default     = "arm64"
}

variable "streaming" {
  description = "Stream responses (SSE) through the Function URL; false: buffered."
  type        = bool
  default     = true
}

variable "auth" {
  description = "OAuth for stock MCP clients: { issuer = \"https://your-authorization-server\", resource = \"https://<url-id>.lambda-url.<region>.on.aws/mcp\" (the mcp_endpoint output of a first apply, or your custom domain), scopes = [...] }. The URL then is public and the server checks access tokens. null: the URL accepts SigV4-signed requests only (AWS_IAM), which stock MCP clients cannot send."
  type = object({
    issuer        = string
    resource      = optional(string)
    jwks_url      = optional(string)
    scopes        = optional(list(string), [])
    metadata_url  = optional(string)
    metadata_path = optional(string)
  })
  default = null
}

variable "allowed_origins" {
  description = "Browser origins the server accepts (MCPFN_ALLOWED_ORIGINS), e.g. [\"https://app.example.com\"]."
  type        = list(string)
  default     = []
}

variable "log_level" {
  description = "debug, info, warn or error (MCPFN_LOG_LEVEL)."
  type        = string
  default     = "info"
}

variable "reserved_concurrent_executions" {
  description = "Concurrent executions reserved for (and capping) the function: a bound on the cost of a public URL. null: the account's unreserved pool."
  type        = number
  default     = null
}

variable "existing_table_arn" {
  description = "ARN of your own DynamoDB session table (store/dynamo's schema); null: the module creates one."
  type        = string
  default     = null
}

variable "existing_secret_arn" {
  description = "ARN of your own Secrets Manager secret of HMAC keys ({\"key\":\"<base64>\"}); null: the module creates one, with a first random key."
  type        = string
  default     = null
}
