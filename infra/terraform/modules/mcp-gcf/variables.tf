variable "name" {
  description = "Name of the Cloud Function (2nd gen); prefix of its service account, secret and source object."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,48}[a-z0-9]$", var.name))
    error_message = "name must be 2 to 50 characters of a-z, 0-9 and '-', starting with a letter and not ending with '-'."
  }
}

variable "project" {
  description = "Google Cloud project id."
  type        = string
}

variable "region" {
  description = "Region of the function, e.g. europe-west1."
  type        = string
}

variable "source_zip_path" {
  description = "Zip of the function's Go source (go.mod at its root, registering entry_point with functions.HTTP), built by your packaging step."
  type        = string

  validation {
    condition     = endswith(var.source_zip_path, ".zip")
    error_message = "source_zip_path must name a .zip file."
  }
}

variable "source_bucket" {
  description = "Existing Cloud Storage bucket the source zip is uploaded to."
  type        = string
}

variable "entry_point" {
  description = "Name the program registers with functions.HTTP (see adapters/gcf)."
  type        = string
  default     = "MCP"
}

variable "runtime" {
  description = "Go runtime of Cloud Functions; it must support the Go version of go.mod (1.26)."
  type        = string
  default     = "go126"

  validation {
    condition     = can(regex("^go[0-9]+$", var.runtime))
    error_message = "runtime must be a Go runtime such as go126."
  }
}

variable "memory" {
  description = "Memory of an instance, e.g. 256M or 1Gi."
  type        = string
  default     = "256M"
}

variable "timeout_seconds" {
  description = "Longest request, in seconds (it bounds an SSE stream too); HTTP functions allow up to 3600."
  type        = number
  default     = 60

  validation {
    condition     = var.timeout_seconds >= 1 && var.timeout_seconds <= 3600
    error_message = "timeout_seconds must be from 1 to 3600."
  }
}

variable "max_instance_count" {
  description = "Most instances at once (a bound on what a public function can cost), also given to the deploy kit as MCPFN_MAX_INSTANCES. Legacy sessions and the tasks of the Tasks extension live in each instance (the deploy kit has no shared store on Google Cloud): clients of 2025-* revisions may lose their session when served by another instance, and a task polled through another instance is unknown (-32602), so the kit refuses to start a server with task tools unless this is 1. Keep it at 1 for them, or give the server a shared SessionStore and TaskStore in your code."
  type        = number
  default     = 10

  validation {
    condition     = var.max_instance_count >= 1 && floor(var.max_instance_count) == var.max_instance_count
    error_message = "max_instance_count must be a whole number of instances, at least 1."
  }
}

variable "public" {
  description = "Whether anyone may invoke the function (allUsers gets roles/run.invoker): with auth, the setup stock MCP clients can use (they cannot send Google identity tokens). false (the default: nothing is public until you choose): callers need an identity token of a principal with roles/run.invoker. public without auth is refused unless allow_unauthenticated = true."
  type        = bool
  default     = false
}

variable "auth" {
  description = <<-EOT
    The server as an OAuth 2.1 protected resource (package auth), for a public function that stock MCP clients can use. null: no token check.
      issuer        the authorization server's issuer URL; its JWT access tokens are accepted (MCPFN_AUTH_ISSUER)
      resource      the canonical URL of the MCP endpoint as clients use it (the url output, known after a first apply, or your custom domain) (MCPFN_AUTH_RESOURCE)
      jwks_url      the issuer's JWKS, when its metadata does not name it (MCPFN_AUTH_JWKS_URL)
      scopes        scopes every request needs (MCPFN_AUTH_SCOPES)
      metadata_url  where clients fetch the protected resource metadata, when not at the resource's well-known URL (MCPFN_AUTH_METADATA_URL), and metadata_path, its path as the function sees it (MCPFN_AUTH_METADATA_PATH)
  EOT
  type = object({
    issuer        = string
    resource      = string
    jwks_url      = optional(string)
    scopes        = optional(list(string), [])
    metadata_url  = optional(string)
    metadata_path = optional(string)
  })
  default = null

  validation {
    condition     = var.auth == null ? true : can(regex("^https://", var.auth.issuer)) && can(regex("^https://[^#]+$", var.auth.resource))
    error_message = "auth.issuer and auth.resource must be https URLs (auth.resource without a fragment)."
  }
}

variable "allow_unauthenticated" {
  description = "Allow public = true without auth: anyone can call every tool, at your cost (bound it with max_instance_count). false (the default): that combination is refused at plan time."
  type        = bool
  default     = false
}

variable "allowed_origins" {
  description = "Browser origins the server accepts (MCPFN_ALLOWED_ORIGINS)."
  type        = list(string)
  default     = []
}

variable "log_level" {
  description = "debug, info, warn or error (MCPFN_LOG_LEVEL)."
  type        = string
  default     = "info"

  validation {
    condition     = contains(["debug", "info", "warn", "error"], var.log_level)
    error_message = "log_level must be debug, info, warn or error."
  }
}

variable "environment" {
  description = "Extra environment variables of the function. Refused: those the module sets (MCPFN_STATE_KEY, MCPFN_ALLOWED_ORIGINS, MCPFN_LOG_LEVEL, MCPFN_MAX_INSTANCES, and those of auth), and the Lambda kit's MCPFN_DYNAMODB_TABLE, MCPFN_KEYS_SECRET_ID and MCPFN_STREAMING, which the Cloud Functions kit refuses to start with."
  type        = map(string)
  default     = {}

  validation {
    condition = alltrue([for k in keys(var.environment) : !contains([
      "MCPFN_STATE_KEY", "MCPFN_ALLOWED_ORIGINS", "MCPFN_LOG_LEVEL", "MCPFN_MAX_INSTANCES",
      "MCPFN_DYNAMODB_TABLE", "MCPFN_KEYS_SECRET_ID", "MCPFN_STREAMING",
      "MCPFN_AUTH_RESOURCE", "MCPFN_AUTH_ISSUER", "MCPFN_AUTH_JWKS_URL", "MCPFN_AUTH_SCOPES", "MCPFN_AUTH_METADATA_URL", "MCPFN_AUTH_METADATA_PATH",
    ], k)])
    error_message = "environment must not set the variables the module wires (MCPFN_STATE_KEY, MCPFN_ALLOWED_ORIGINS, MCPFN_LOG_LEVEL, MCPFN_MAX_INSTANCES, MCPFN_AUTH_RESOURCE, MCPFN_AUTH_ISSUER, MCPFN_AUTH_JWKS_URL, MCPFN_AUTH_SCOPES, MCPFN_AUTH_METADATA_URL, MCPFN_AUTH_METADATA_PATH: use the module's variables) nor the Lambda kit's (MCPFN_DYNAMODB_TABLE, MCPFN_KEYS_SECRET_ID, MCPFN_STREAMING: not read on Cloud Functions)."
  }
}
