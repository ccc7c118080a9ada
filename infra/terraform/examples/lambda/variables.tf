variable "region" {
  description = "AWS region to deploy to."
  type        = string
  default     = "us-east-1"
}

variable "name" {
  description = "Name of the function (and prefix of the secret and the role)."
  type        = string
  default     = "mcpfn-calculator"
}

variable "architecture" {
  description = "arm64 (examples/lambda/build/lambda-arm64.zip) or x86_64 (.../lambda-amd64.zip)."
  type        = string
  default     = "arm64"
}

variable "zip_path" {
  description = "Deployment package; null: the one examples/lambda/build.sh writes for var.architecture."
  type        = string
  default     = null
}

variable "table_name" {
  description = "DynamoDB session table; the default is store/dynamo's DefaultTableName."
  type        = string
  default     = "mcpfn-sessions"
}

variable "authorization_type" {
  description = "AWS_IAM (SigV4-signed requests only) or NONE (public: for a server that authenticates callers itself; the calculator does not, so NONE also needs allow_unauthenticated = true)."
  type        = string
  default     = "AWS_IAM"
}

variable "allow_unauthenticated" {
  description = "With authorization_type = NONE: allow the public URL although the calculator checks no token (anyone can call it, at your cost). NONE without it is refused."
  type        = bool
  default     = false
}

variable "allowed_origins" {
  description = "Browser origins the server accepts (MCPFN_ALLOWED_ORIGINS)."
  type        = list(string)
  default     = []
}

variable "enable_rest_api" {
  description = "Also put a streaming API Gateway REST API in front of the function."
  type        = bool
  default     = false
}
