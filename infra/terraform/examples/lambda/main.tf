# examples/lambda (the calculator) as a streaming Lambda function with its
# session table and signing keys. See README.md.

provider "aws" {
  region = var.region

  default_tags {
    tags = {
      project = "mcpfn"
      example = "lambda"
    }
  }
}

locals {
  # examples/lambda/build.sh names packages by GOARCH.
  goarch   = var.architecture == "x86_64" ? "amd64" : "arm64"
  zip_path = coalesce(var.zip_path, "${path.module}/../../../../examples/lambda/build/lambda-${local.goarch}.zip")
}

module "calculator" {
  source = "../../modules/mcp-lambda"

  name                  = var.name
  zip_path              = local.zip_path
  architecture          = var.architecture
  table_name            = var.table_name
  authorization_type    = var.authorization_type
  allow_unauthenticated = var.allow_unauthenticated
  allowed_origins       = var.allowed_origins
  enable_rest_api       = var.enable_rest_api
}

data "aws_region" "current" {}
