# Your own MCP server as a Lambda function: the zip `mcpfn package lambda`
# writes, deployed with modules/mcp-lambda fetched from the mcpfn repository
# at a release tag. See README.md.

provider "aws" {
  region = var.region
}

module "mcp" {
  source = "git::https://github.com/mcpfn/mcpfn.git//infra/terraform/modules/mcp-lambda?ref=v0.1.0"

  name         = var.name
  zip_path     = var.zip_path
  architecture = var.architecture
  streaming    = var.streaming

  # With auth, a public URL whose server checks OAuth access tokens: what
  # stock MCP clients can use. Without, AWS_IAM: SigV4-signed requests only.
  authorization_type = var.auth == null ? "AWS_IAM" : "NONE"
  auth               = var.auth
  allowed_origins    = var.allowed_origins
  log_level          = var.log_level

  reserved_concurrent_executions = var.reserved_concurrent_executions

  existing_table_arn  = var.existing_table_arn
  existing_secret_arn = var.existing_secret_arn
}

data "aws_region" "current" {}
