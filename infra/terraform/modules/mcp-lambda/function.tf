locals {
  # Bring your own table and secret (existing_table_arn, existing_secret_arn),
  # or the module creates them; the role is scoped to whichever is used.
  create_table  = var.existing_table_arn == null
  create_secret = var.existing_secret_arn == null
  table_arn     = local.create_table ? aws_dynamodb_table.sessions[0].arn : var.existing_table_arn
  # arn:PARTITION:dynamodb:REGION:ACCOUNT:table/NAME
  table_name = local.create_table ? aws_dynamodb_table.sessions[0].name : split("/", var.existing_table_arn)[1]
  secret_arn = local.create_secret ? aws_secretsmanager_secret.keys[0].arn : var.existing_secret_arn

  new_table_name  = coalesce(var.table_name, "${var.name}-sessions")
  new_secret_name = coalesce(var.secret_name, "${var.name}/state-keys")

  invoke_mode = var.streaming ? "RESPONSE_STREAM" : "BUFFERED"

  # What the deploy kit (deploy/lambdaenv) reads.
  wiring = {
    MCPFN_DYNAMODB_TABLE  = local.table_name
    MCPFN_KEYS_SECRET_ID  = local.secret_arn
    MCPFN_STREAMING       = var.streaming ? "1" : "0"
    MCPFN_ALLOWED_ORIGINS = join(",", var.allowed_origins)
    MCPFN_LOG_LEVEL       = var.log_level
  }

  # The server as an OAuth 2.1 protected resource (package auth), with
  # var.auth. Without auth.resource, the REST API's stage URL is the
  # resource: it is known before the function exists (the Function URL is
  # not: the function's environment cannot name it), and its metadata
  # document is served under the stage, where clients can reach it
  # (RFC 9728 section 3 puts it at the host's root, which a stage cannot
  # serve), and reaches the handler without the stage prefix.
  rest_stage_url = var.enable_rest_api ? "https://${aws_api_gateway_rest_api.this[0].id}.execute-api.${data.aws_region.current.region}.${data.aws_partition.current.dns_suffix}/${var.rest_api_stage}" : null
  auth_derived   = var.auth != null && try(var.auth.resource, null) == null && var.enable_rest_api
  auth_settings = var.auth == null ? {} : {
    MCPFN_AUTH_RESOURCE      = local.auth_derived ? "${local.rest_stage_url}/mcp" : var.auth.resource
    MCPFN_AUTH_ISSUER        = var.auth.issuer
    MCPFN_AUTH_JWKS_URL      = var.auth.jwks_url
    MCPFN_AUTH_SCOPES        = length(var.auth.scopes) > 0 ? join(" ", var.auth.scopes) : null
    MCPFN_AUTH_METADATA_URL  = local.auth_derived ? "${local.rest_stage_url}/.well-known/oauth-protected-resource" : var.auth.metadata_url
    MCPFN_AUTH_METADATA_PATH = local.auth_derived ? "/.well-known/oauth-protected-resource" : var.auth.metadata_path
  }
  auth_wiring = { for k, v in local.auth_settings : k => v if v != null }

  # With var.tasks (the default), a task runs in an asynchronous invocation
  # of this function (the deploy kit's lambda runner), which the role may
  # invoke (iam.tf); without, none: the kit refuses at init a server with
  # task tools, whose tasks would otherwise freeze with the invocation that
  # created them. The claim timeout is the kit's default unless given.
  task_settings = {
    MCPFN_TASK_RUNNER        = var.tasks ? "lambda" : "none"
    MCPFN_TASK_CLAIM_TIMEOUT = var.task_claim_timeout == null ? null : tostring(var.task_claim_timeout)
  }
  task_wiring = { for k, v in local.task_settings : k => v if v != null }
}

resource "aws_cloudwatch_log_group" "function" {
  name              = "/aws/lambda/${var.name}"
  retention_in_days = var.log_retention_days
  tags              = var.tags
}

resource "aws_lambda_function" "this" {
  function_name    = var.name
  description      = var.streaming ? "MCP server (mcpfn), response streaming" : "MCP server (mcpfn), buffered"
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
    variables = merge(var.environment, local.auth_wiring, local.task_wiring, local.wiring)
  }

  # Lambda's own records as JSON, and AWS_LAMBDA_LOG_FORMAT=JSON in the
  # function's environment: the deploy kit then logs JSON too.
  logging_config {
    log_format = "JSON"
    log_group  = aws_cloudwatch_log_group.function.name
  }

  tags = var.tags

  # Before the first invocation, the role must be able to read the table and
  # the secret, and to write the logs, and the secret must hold a key.
  depends_on = [aws_iam_role_policy.function, aws_iam_role_policy.kms, aws_secretsmanager_secret_version.initial]

  lifecycle {
    precondition {
      condition     = var.existing_table_arn == null || var.table_name == null
      error_message = "Set table_name (a table the module creates) or existing_table_arn (your own table), not both."
    }
    precondition {
      condition     = var.existing_secret_arn == null || (var.secret_name == null && var.rotation_lambda_arn == null)
      error_message = "With existing_secret_arn (your own secret), secret_name and rotation_lambda_arn do not apply: the secret and its rotation are yours; leave them null."
    }
  }
}

# The Function URL: RESPONSE_STREAM with streaming (SSE through the URL),
# BUFFERED without. The server answers CORS preflights itself
# (MCPFN_ALLOWED_ORIGINS), so the URL has no cors block: one would answer
# preflights before the function sees them.
resource "aws_lambda_function_url" "this" {
  function_name      = aws_lambda_function.this.function_name
  authorization_type = var.authorization_type
  invoke_mode        = local.invoke_mode

  # With tasks, the first request may create one: the role must then be
  # able to invoke the function (iam.tf, SelfInvoke) before the URL exists.
  depends_on = [aws_iam_role_policy.tasks]

  lifecycle {
    # A public endpoint that checks no token is what a copy-paste of
    # authorization_type = "NONE" would give: refuse it unless asked for.
    precondition {
      condition     = var.authorization_type == "AWS_IAM" || var.auth != null || var.allow_unauthenticated
      error_message = "authorization_type = \"NONE\" without auth makes the MCP endpoint public with no authentication: anyone on the Internet can call every tool, at your cost. Set auth (the server then checks OAuth access tokens; see the module README), or set allow_unauthenticated = true if a public, unauthenticated server is really what you want."
    }
    precondition {
      condition     = var.auth == null || var.authorization_type == "NONE"
      error_message = "auth needs authorization_type = \"NONE\": OAuth access tokens and AWS_IAM's SigV4 signatures both travel in the Authorization header, so a request cannot carry both."
    }
    precondition {
      condition     = var.auth == null || try(var.auth.resource, null) != null || var.enable_rest_api
      error_message = "auth.resource is required on a Function URL: it is the URL clients use (https://<url-id>.lambda-url.<region>.on.aws/mcp, known only after the URL exists, or your custom domain), and the function's environment cannot name a URL created after it. Set auth.resource, or enable_rest_api (the module then uses the REST API's stage URL)."
    }
  }
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
