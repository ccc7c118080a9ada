locals {
  table_name  = coalesce(var.table_name, "${var.name}-sessions")
  secret_name = coalesce(var.secret_name, "${var.name}/state-keys")

  # What examples/internal/envconfig (and the example's main) read.
  wiring = {
    MCPFN_DYNAMODB_TABLE  = aws_dynamodb_table.sessions.name
    MCPFN_KEYS_SECRET_ID  = aws_secretsmanager_secret.keys.arn
    MCPFN_STREAMING       = "1"
    MCPFN_ALLOWED_ORIGINS = join(",", var.allowed_origins)
    MCPFN_LOG_LEVEL       = var.log_level
  }
}

resource "aws_cloudwatch_log_group" "function" {
  name              = "/aws/lambda/${var.name}"
  retention_in_days = var.log_retention_days
  tags              = var.tags
}

resource "aws_lambda_function" "this" {
  function_name    = var.name
  description      = "MCP server (mcpfn), response streaming"
  role             = aws_iam_role.function.arn
  runtime          = "provided.al2023"
  handler          = "bootstrap"
  architectures    = [var.architecture]
  filename         = var.zip_path
  source_code_hash = filebase64sha256(var.zip_path)
  memory_size      = var.memory_size
  timeout          = var.timeout

  reserved_concurrent_executions = var.reserved_concurrent_executions

  environment {
    variables = merge(var.environment, local.wiring)
  }

  logging_config {
    log_format = "JSON"
    log_group  = aws_cloudwatch_log_group.function.name
  }

  tags = var.tags

  # Before the first invocation, the role must be able to read the table and
  # the secret, and to write the logs, and the secret must hold a key.
  depends_on = [aws_iam_role_policy.function, aws_iam_role_policy.kms, aws_secretsmanager_secret_version.initial]
}

# The server streams (SSE) through the URL. It answers CORS preflights
# itself (MCPFN_ALLOWED_ORIGINS), so the URL has no cors block: one would
# answer preflights before the function sees them.
resource "aws_lambda_function_url" "this" {
  function_name      = aws_lambda_function.this.function_name
  authorization_type = var.authorization_type
  invoke_mode        = "RESPONSE_STREAM"
}

# A NONE URL needs two statements in the function's resource policy:
# lambda:InvokeFunctionUrl (the provider adds it, as the statement
# FunctionURLAllowPublicAccess, when it creates a NONE URL) and, since
# October 2025, lambda:InvokeFunction restricted to calls through the URL.
resource "aws_lambda_permission" "url" {
  count = var.authorization_type == "NONE" ? 1 : 0

  statement_id             = "FunctionURLInvokeAllowPublicAccess"
  action                   = "lambda:InvokeFunction"
  function_name            = aws_lambda_function.this.function_name
  principal                = "*"
  invoked_via_function_url = true
}
