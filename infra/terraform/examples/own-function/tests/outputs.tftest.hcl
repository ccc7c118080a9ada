# examples/own-function applied against mock providers (tofu test, offline):
# its outputs give a client what it needs (the endpoint) and the environment
# the function gets, in both auth setups. test/terraform/check.sh runs it in
# a copy whose module source is this checkout's modules/mcp-lambda.

mock_provider "aws" {
  mock_resource "aws_dynamodb_table" {
    defaults = {
      arn = "arn:aws:dynamodb:us-east-1:123456789012:table/mock-sessions"
    }
  }
  mock_resource "aws_secretsmanager_secret" {
    defaults = {
      arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:mock/state-keys-AbCdEf"
      id  = "arn:aws:secretsmanager:us-east-1:123456789012:secret:mock/state-keys-AbCdEf"
    }
  }
  mock_resource "aws_cloudwatch_log_group" {
    defaults = {
      arn = "arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/mock"
    }
  }
  mock_resource "aws_iam_role" {
    defaults = {
      arn = "arn:aws:iam::123456789012:role/mock-role"
    }
  }
  mock_resource "aws_lambda_function" {
    defaults = {
      arn                           = "arn:aws:lambda:us-east-1:123456789012:function:mock"
      invoke_arn                    = "arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/arn:aws:lambda:us-east-1:123456789012:function:mock/invocations"
      response_streaming_invoke_arn = "arn:aws:apigateway:us-east-1:lambda:path/2021-11-15/functions/arn:aws:lambda:us-east-1:123456789012:function:mock/response-streaming-invocations"
    }
  }
  mock_resource "aws_lambda_function_url" {
    defaults = {
      function_url = "https://mockurlid.lambda-url.us-east-1.on.aws/"
    }
  }
  mock_resource "aws_api_gateway_rest_api" {
    defaults = {
      id            = "mockapi123"
      execution_arn = "arn:aws:execute-api:us-east-1:123456789012:mockapi123"
    }
  }
  mock_resource "aws_api_gateway_stage" {
    defaults = {
      invoke_url = "https://mockapi123.execute-api.us-east-1.amazonaws.com/prod"
    }
  }
  mock_data "aws_region" {
    defaults = {
      region = "us-east-1"
    }
  }
  mock_data "aws_partition" {
    defaults = {
      partition  = "aws"
      dns_suffix = "amazonaws.com"
    }
  }
  mock_data "aws_iam_policy_document" {
    defaults = {
      json = "{\"Version\":\"2012-10-17\",\"Statement\":[]}"
    }
  }
}

mock_provider "random" {}

variables {
  zip_path = "tests/empty.zip"
}

run "aws_iam" {
  command = apply

  assert {
    condition     = output.mcp_endpoint == "https://mockurlid.lambda-url.us-east-1.on.aws/mcp" && output.invoke_mode == "RESPONSE_STREAM"
    error_message = "mcp_endpoint = ${output.mcp_endpoint}, invoke_mode = ${output.invoke_mode}"
  }
  assert {
    condition     = toset(keys(output.environment)) == toset(["MCPFN_DYNAMODB_TABLE", "MCPFN_KEYS_SECRET_ID", "MCPFN_STREAMING", "MCPFN_ALLOWED_ORIGINS", "MCPFN_LOG_LEVEL", "MCPFN_TASK_RUNNER"])
    error_message = "environment: ${jsonencode(output.environment)}"
  }
  assert {
    condition     = output.environment["MCPFN_DYNAMODB_TABLE"] == "my-mcp-server-sessions" && output.environment["MCPFN_STREAMING"] == "1" && output.environment["MCPFN_TASK_RUNNER"] == "lambda" && output.region == "us-east-1"
    error_message = "environment: ${jsonencode(output.environment)}"
  }
}

run "oauth_buffered" {
  command = apply

  variables {
    streaming = false
    auth = {
      issuer   = "https://auth.example.com"
      resource = "https://mcp.example.com/mcp"
    }
  }

  assert {
    condition     = output.invoke_mode == "BUFFERED" && output.environment["MCPFN_STREAMING"] == "0"
    error_message = "invoke_mode = ${output.invoke_mode}, environment: ${jsonencode(output.environment)}"
  }
  assert {
    condition     = output.environment["MCPFN_AUTH_RESOURCE"] == "https://mcp.example.com/mcp" && output.environment["MCPFN_AUTH_ISSUER"] == "https://auth.example.com"
    error_message = "environment: ${jsonencode(output.environment)}"
  }
}
