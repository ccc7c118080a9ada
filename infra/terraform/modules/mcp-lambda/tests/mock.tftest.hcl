# The module applied against mock providers (OpenTofu >= 1.8, Terraform >= 1.7:
# `tofu test`), offline: no AWS call, no credentials. It checks the wiring
# the deploy kit relies on, in each configuration the module offers:
#
#   - the function's environment is exactly the variables the deploy kit
#     reads (deploy/lambdaenv), with the values
#     of the resources they name;
#   - the Function URL's invoke mode (and the REST API's integration) matches
#     MCPFN_STREAMING;
#   - the role's statements name exactly the table, its indexes, the secret
#     (and the log group, and a KMS key when given, and with tasks, the
#     default, the function itself for lambda:InvokeFunction), and nothing
#     else;
#   - tasks run in asynchronous invocations by default (MCPFN_TASK_RUNNER
#     lambda), and with tasks = false the kit is told none (it then refuses
#     task tools at init) and the role cannot invoke the function;
#   - the table's time-to-live attribute is store/dynamo's TTLAttribute
#     (test/terraform/tftest_test.go compares the literal below with it);
#   - the refusals: NONE without auth, auth with AWS_IAM, conflicting
#     variables, a task claim timeout out of range.
#
# The mocks give computed ARNs the shape AWS gives them (the provider
# validates some references as ARNs); everything else the mocks make up.

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
  name     = "mock"
  zip_path = "tests/empty.zip"
}

# The defaults: the module's own table and secret, streaming, AWS_IAM, and
# tasks in asynchronous invocations of the function.
run "defaults" {
  command = apply

  assert {
    condition = aws_lambda_function.this.environment[0].variables == tomap({
      MCPFN_DYNAMODB_TABLE  = "mock-sessions"
      MCPFN_KEYS_SECRET_ID  = "arn:aws:secretsmanager:us-east-1:123456789012:secret:mock/state-keys-AbCdEf"
      MCPFN_STREAMING       = "1"
      MCPFN_ALLOWED_ORIGINS = ""
      MCPFN_LOG_LEVEL       = "info"
      MCPFN_TASK_RUNNER     = "lambda"
    })
    error_message = "environment: ${jsonencode(aws_lambda_function.this.environment[0].variables)}"
  }
  assert {
    condition     = lookup(aws_lambda_function.this.environment[0].variables, "MCPFN_TASK_RUNNER", "(unset)") == "lambda"
    error_message = "MCPFN_TASK_RUNNER = ${lookup(aws_lambda_function.this.environment[0].variables, "MCPFN_TASK_RUNNER", "(unset)")}, want lambda by default: Lambda freezes the invocation that created a task"
  }
  assert {
    condition     = output.environment == aws_lambda_function.this.environment[0].variables
    error_message = "output environment is not the function's environment"
  }
  assert {
    condition     = aws_dynamodb_table.sessions[0].name == "mock-sessions" && aws_secretsmanager_secret.keys[0].name == "mock/state-keys"
    error_message = "table ${aws_dynamodb_table.sessions[0].name}, secret ${aws_secretsmanager_secret.keys[0].name}"
  }
  assert {
    condition     = aws_lambda_function_url.this.invoke_mode == "RESPONSE_STREAM" && output.invoke_mode == "RESPONSE_STREAM"
    error_message = "invoke_mode = ${aws_lambda_function_url.this.invoke_mode}, want RESPONSE_STREAM (MCPFN_STREAMING=1)"
  }
  assert {
    condition     = aws_lambda_function_url.this.authorization_type == "AWS_IAM" && length(aws_lambda_permission.url) == 0
    error_message = "the default URL must be AWS_IAM, with no public permission"
  }
  assert {
    condition = { for s in data.aws_iam_policy_document.function.statement : s.sid => toset(s.resources) } == {
      SessionTable = toset(["arn:aws:dynamodb:us-east-1:123456789012:table/mock-sessions", "arn:aws:dynamodb:us-east-1:123456789012:table/mock-sessions/index/*"])
      StateKeys    = toset(["arn:aws:secretsmanager:us-east-1:123456789012:secret:mock/state-keys-AbCdEf"])
      Logs         = toset(["arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/mock:*"])
    }
    error_message = "role statements: ${jsonencode([for s in data.aws_iam_policy_document.function.statement : { sid = s.sid, resources = s.resources }])}"
  }
  assert {
    condition     = length(aws_iam_role_policy.kms) == 0 && aws_iam_role_policy.function.role == aws_iam_role.function.id && aws_lambda_function.this.role == aws_iam_role.function.arn
    error_message = "the role's policies are not wired as expected"
  }
  assert {
    condition     = length(aws_iam_role_policy.tasks) == 1 && aws_iam_role_policy.tasks[0].role == aws_iam_role.function.id
    error_message = "the self-invocation policy is not attached to the function's role"
  }
  assert {
    condition = [for s in data.aws_iam_policy_document.tasks[0].statement : { sid = s.sid, actions = toset(s.actions), resources = toset(s.resources) }] == [{
      sid       = "SelfInvoke"
      actions   = toset(["lambda:InvokeFunction"])
      resources = toset(["arn:aws:lambda:us-east-1:123456789012:function:mock"])
    }]
    error_message = "self-invocation statements: ${jsonencode([for s in data.aws_iam_policy_document.tasks[0].statement : { sid = s.sid, actions = s.actions, resources = s.resources }])}"
  }
  assert {
    condition     = one(data.aws_iam_policy_document.tasks[0].statement).resources == toset([aws_lambda_function.this.arn])
    error_message = "SelfInvoke must name the function's own unqualified ARN"
  }
  assert {
    condition     = aws_dynamodb_table.sessions[0].ttl[0].attribute_name == "ttl" && aws_dynamodb_table.sessions[0].ttl[0].enabled
    error_message = "time to live on ${aws_dynamodb_table.sessions[0].ttl[0].attribute_name}, want ttl (dynamo.TTLAttribute), enabled"
  }
  assert {
    condition     = aws_lambda_function.this.logging_config[0].log_format == "JSON"
    error_message = "log_format = ${aws_lambda_function.this.logging_config[0].log_format}, want JSON (Lambda then sets AWS_LAMBDA_LOG_FORMAT=JSON, and the deploy kit logs JSON)"
  }
  assert {
    condition     = length(random_bytes.state_key) == 1 && jsondecode(aws_secretsmanager_secret_version.initial[0].secret_string).key == random_bytes.state_key[0].base64
    error_message = "the first key version is not {\"key\": <the random bytes>}"
  }
  assert {
    condition     = output.mcp_endpoint == "https://mockurlid.lambda-url.us-east-1.on.aws/mcp" && output.rest_api_endpoint == null
    error_message = "mcp_endpoint = ${output.mcp_endpoint}"
  }
}

# No tasks: MCPFN_TASK_RUNNER=none (the deploy kit refuses task tools at
# init), and the role cannot invoke the function; the rest of the
# environment and of the role is that of the defaults.
run "no_tasks" {
  command = apply

  variables {
    tasks = false
  }

  assert {
    condition = aws_lambda_function.this.environment[0].variables == tomap({
      MCPFN_DYNAMODB_TABLE  = "mock-sessions"
      MCPFN_KEYS_SECRET_ID  = "arn:aws:secretsmanager:us-east-1:123456789012:secret:mock/state-keys-AbCdEf"
      MCPFN_STREAMING       = "1"
      MCPFN_ALLOWED_ORIGINS = ""
      MCPFN_LOG_LEVEL       = "info"
      MCPFN_TASK_RUNNER     = "none"
    })
    error_message = "environment: ${jsonencode(aws_lambda_function.this.environment[0].variables)}"
  }
  assert {
    condition     = lookup(aws_lambda_function.this.environment[0].variables, "MCPFN_TASK_RUNNER", "(unset)") == "none"
    error_message = "MCPFN_TASK_RUNNER = ${lookup(aws_lambda_function.this.environment[0].variables, "MCPFN_TASK_RUNNER", "(unset)")} with tasks = false, want none (the kit then refuses task tools at init)"
  }
  assert {
    condition     = length(aws_iam_role_policy.tasks) == 0 && length(data.aws_iam_policy_document.tasks) == 0
    error_message = "without tasks the role must not be able to invoke the function"
  }
  assert {
    condition = { for s in data.aws_iam_policy_document.function.statement : s.sid => toset(s.resources) } == {
      SessionTable = toset(["arn:aws:dynamodb:us-east-1:123456789012:table/mock-sessions", "arn:aws:dynamodb:us-east-1:123456789012:table/mock-sessions/index/*"])
      StateKeys    = toset(["arn:aws:secretsmanager:us-east-1:123456789012:secret:mock/state-keys-AbCdEf"])
      Logs         = toset(["arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/mock:*"])
    }
    error_message = "role statements: ${jsonencode([for s in data.aws_iam_policy_document.function.statement : { sid = s.sid, resources = s.resources }])}"
  }
}

# The claim timeout of an unclaimed task, in whole seconds as the kit reads
# them; unset in the defaults (the kit's default applies).
run "task_claim_timeout" {
  command = apply

  variables {
    task_claim_timeout = 900
  }

  assert {
    condition     = lookup(aws_lambda_function.this.environment[0].variables, "MCPFN_TASK_CLAIM_TIMEOUT", "(unset)") == "900"
    error_message = "MCPFN_TASK_CLAIM_TIMEOUT = ${lookup(aws_lambda_function.this.environment[0].variables, "MCPFN_TASK_CLAIM_TIMEOUT", "(unset)")}, want 900"
  }
}

run "task_claim_timeout_zero_refused" {
  command = plan

  variables {
    task_claim_timeout = 0
  }

  expect_failures = [var.task_claim_timeout]
}

run "task_claim_timeout_past_event_age_refused" {
  command = plan

  variables {
    task_claim_timeout = 21601
  }

  expect_failures = [var.task_claim_timeout]
}

run "task_claim_timeout_fraction_refused" {
  command = plan

  variables {
    task_claim_timeout = 1.5
  }

  expect_failures = [var.task_claim_timeout]
}

run "task_claim_timeout_in_environment_refused" {
  command = plan

  variables {
    environment = {
      MCPFN_TASK_CLAIM_TIMEOUT = "60"
    }
  }

  expect_failures = [var.environment]
}

run "tasks_runner_in_environment_refused" {
  command = plan

  variables {
    environment = {
      MCPFN_TASK_RUNNER = "lambda"
    }
  }

  expect_failures = [var.environment]
}

# Buffered: BUFFERED on both front doors, and MCPFN_STREAMING=0.
run "buffered" {
  command = apply

  variables {
    streaming       = false
    enable_rest_api = true
    timeout         = 120
  }

  assert {
    condition     = aws_lambda_function_url.this.invoke_mode == "BUFFERED" && aws_lambda_function.this.environment[0].variables["MCPFN_STREAMING"] == "0"
    error_message = "invoke_mode = ${aws_lambda_function_url.this.invoke_mode}, MCPFN_STREAMING = ${aws_lambda_function.this.environment[0].variables["MCPFN_STREAMING"]}; want BUFFERED and 0"
  }
  assert {
    condition     = aws_api_gateway_integration.proxy[0].response_transfer_mode == "BUFFERED" && aws_api_gateway_integration.proxy[0].uri == aws_lambda_function.this.invoke_arn
    error_message = "the REST API integration streams: ${aws_api_gateway_integration.proxy[0].response_transfer_mode} ${aws_api_gateway_integration.proxy[0].uri}"
  }
  assert {
    condition     = aws_api_gateway_integration.proxy[0].timeout_milliseconds == 29000
    error_message = "a buffered integration's timeout is at most 29 s, got ${aws_api_gateway_integration.proxy[0].timeout_milliseconds} ms"
  }
}

# Streaming through the REST API: the response-streaming-invocations URI.
run "streaming_rest_api" {
  command = apply

  variables {
    enable_rest_api = true
    timeout         = 120
  }

  assert {
    condition     = aws_api_gateway_integration.proxy[0].response_transfer_mode == "STREAM" && aws_api_gateway_integration.proxy[0].uri == aws_lambda_function.this.response_streaming_invoke_arn && aws_api_gateway_integration.proxy[0].timeout_milliseconds == 120000
    error_message = "the REST API integration does not stream: ${aws_api_gateway_integration.proxy[0].response_transfer_mode} ${aws_api_gateway_integration.proxy[0].uri}"
  }
  assert {
    condition     = output.rest_api_endpoint != null && endswith(output.rest_api_endpoint, "/mcp")
    error_message = "rest_api_endpoint = ${jsonencode(output.rest_api_endpoint)}"
  }
}

# Bring your own table and secret: the module creates neither, and the role
# names exactly them.
run "own_table_and_secret" {
  command = apply

  variables {
    existing_table_arn  = "arn:aws:dynamodb:eu-west-1:210987654321:table/shared-sessions"
    existing_secret_arn = "arn:aws:secretsmanager:eu-west-1:210987654321:secret:shared/keys-XyZ123"
  }

  assert {
    condition     = length(aws_dynamodb_table.sessions) == 0 && length(aws_secretsmanager_secret.keys) == 0 && length(aws_secretsmanager_secret_version.initial) == 0 && length(random_bytes.state_key) == 0
    error_message = "with an existing table and secret, the module must create neither (nor a key version)"
  }
  assert {
    condition     = aws_lambda_function.this.environment[0].variables["MCPFN_DYNAMODB_TABLE"] == "shared-sessions" && aws_lambda_function.this.environment[0].variables["MCPFN_KEYS_SECRET_ID"] == "arn:aws:secretsmanager:eu-west-1:210987654321:secret:shared/keys-XyZ123"
    error_message = "environment: ${jsonencode(aws_lambda_function.this.environment[0].variables)}"
  }
  assert {
    condition = { for s in data.aws_iam_policy_document.function.statement : s.sid => toset(s.resources) } == {
      SessionTable = toset(["arn:aws:dynamodb:eu-west-1:210987654321:table/shared-sessions", "arn:aws:dynamodb:eu-west-1:210987654321:table/shared-sessions/index/*"])
      StateKeys    = toset(["arn:aws:secretsmanager:eu-west-1:210987654321:secret:shared/keys-XyZ123"])
      Logs         = toset(["arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/mock:*"])
    }
    error_message = "role statements: ${jsonencode([for s in data.aws_iam_policy_document.function.statement : { sid = s.sid, resources = s.resources }])}"
  }
  assert {
    condition     = output.table_name == "shared-sessions" && output.table_arn == var.existing_table_arn && output.secret_arn == var.existing_secret_arn && output.secret_name == var.existing_secret_arn
    error_message = "outputs do not name the existing table and secret"
  }
}

# Only one of the two: the other is the module's.
run "own_secret_only" {
  command = apply

  variables {
    existing_secret_arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:mine-XyZ123"
    secret_kms_key_arn  = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
  }

  assert {
    condition     = length(aws_dynamodb_table.sessions) == 1 && length(aws_secretsmanager_secret.keys) == 0
    error_message = "want the module's table and no secret"
  }
  assert {
    condition     = toset(flatten([for s in data.aws_iam_policy_document.function.statement : s.resources if s.sid == "StateKeys"])) == toset(["arn:aws:secretsmanager:us-east-1:123456789012:secret:mine-XyZ123"])
    error_message = "the StateKeys statement does not name exactly the existing secret"
  }
  assert {
    condition     = length(aws_iam_role_policy.kms) == 1 && toset(flatten([for s in data.aws_iam_policy_document.kms[0].statement : s.resources])) == toset([var.secret_kms_key_arn]) && toset(flatten([for s in data.aws_iam_policy_document.kms[0].statement : s.actions])) == toset(["kms:Decrypt"])
    error_message = "kms:Decrypt is not granted on exactly the secret's key"
  }
}

# The OAuth path: a public URL whose server checks access tokens.
run "oauth" {
  command = apply

  variables {
    authorization_type = "NONE"
    allowed_origins    = ["https://app.example.com"]
    auth = {
      issuer   = "https://auth.example.com"
      resource = "https://mcp.example.com/mcp"
      scopes   = ["mcp:tools", "mcp:read"]
    }
  }

  assert {
    condition = aws_lambda_function.this.environment[0].variables == tomap({
      MCPFN_DYNAMODB_TABLE  = "mock-sessions"
      MCPFN_KEYS_SECRET_ID  = "arn:aws:secretsmanager:us-east-1:123456789012:secret:mock/state-keys-AbCdEf"
      MCPFN_STREAMING       = "1"
      MCPFN_ALLOWED_ORIGINS = "https://app.example.com"
      MCPFN_LOG_LEVEL       = "info"
      MCPFN_AUTH_RESOURCE   = "https://mcp.example.com/mcp"
      MCPFN_AUTH_ISSUER     = "https://auth.example.com"
      MCPFN_AUTH_SCOPES     = "mcp:tools mcp:read"
      MCPFN_TASK_RUNNER     = "lambda"
    })
    error_message = "environment: ${jsonencode(aws_lambda_function.this.environment[0].variables)}"
  }
  assert {
    condition     = aws_lambda_function_url.this.authorization_type == "NONE" && length(aws_lambda_permission.url) == 1 && aws_lambda_permission.url[0].invoked_via_function_url
    error_message = "a NONE URL needs the lambda:InvokeFunction permission restricted to the URL"
  }
}

# OAuth behind the REST API: the stage URL is the resource, and the metadata
# document is served under the stage.
run "oauth_rest_api" {
  command = apply

  variables {
    authorization_type = "NONE"
    enable_rest_api    = true
    auth = {
      issuer = "https://auth.example.com"
    }
  }

  assert {
    condition     = aws_lambda_function.this.environment[0].variables["MCPFN_AUTH_RESOURCE"] == "https://mockapi123.execute-api.us-east-1.amazonaws.com/prod/mcp"
    error_message = "MCPFN_AUTH_RESOURCE = ${jsonencode(lookup(aws_lambda_function.this.environment[0].variables, "MCPFN_AUTH_RESOURCE", null))}"
  }
  assert {
    condition     = aws_lambda_function.this.environment[0].variables["MCPFN_AUTH_METADATA_URL"] == "https://mockapi123.execute-api.us-east-1.amazonaws.com/prod/.well-known/oauth-protected-resource" && aws_lambda_function.this.environment[0].variables["MCPFN_AUTH_METADATA_PATH"] == "/.well-known/oauth-protected-resource"
    error_message = "environment: ${jsonencode(aws_lambda_function.this.environment[0].variables)}"
  }
  assert {
    condition     = !contains(keys(aws_lambda_function.this.environment[0].variables), "MCPFN_AUTH_SCOPES") && !contains(keys(aws_lambda_function.this.environment[0].variables), "MCPFN_AUTH_JWKS_URL")
    error_message = "unset auth fields must not be in the environment"
  }
  assert {
    condition     = output.rest_api_endpoint == aws_lambda_function.this.environment[0].variables["MCPFN_AUTH_RESOURCE"]
    error_message = "rest_api_endpoint ${jsonencode(output.rest_api_endpoint)} is not the resource"
  }
}

# A public endpoint with no token check only when asked for.
run "public_unauthenticated_refused" {
  command = plan

  variables {
    authorization_type = "NONE"
  }

  expect_failures = [aws_lambda_function_url.this]
}

run "public_unauthenticated_allowed" {
  command = apply

  variables {
    authorization_type    = "NONE"
    allow_unauthenticated = true
  }

  assert {
    condition     = aws_lambda_function_url.this.authorization_type == "NONE" && !contains(keys(aws_lambda_function.this.environment[0].variables), "MCPFN_AUTH_RESOURCE")
    error_message = "want a NONE URL without auth"
  }
}

run "auth_with_aws_iam_refused" {
  command = plan

  variables {
    auth = {
      issuer   = "https://auth.example.com"
      resource = "https://mcp.example.com/mcp"
    }
  }

  expect_failures = [aws_lambda_function_url.this]
}

run "auth_without_resource_on_function_url_refused" {
  command = plan

  variables {
    authorization_type = "NONE"
    auth = {
      issuer = "https://auth.example.com"
    }
  }

  expect_failures = [aws_lambda_function_url.this]
}

run "table_name_with_existing_table_refused" {
  command = plan

  variables {
    table_name         = "mine"
    existing_table_arn = "arn:aws:dynamodb:us-east-1:123456789012:table/shared-sessions"
  }

  expect_failures = [aws_lambda_function.this]
}

run "wired_variable_in_environment_refused" {
  command = plan

  variables {
    environment = {
      MCPFN_AUTH_RESOURCE = "https://elsewhere.example.com/mcp"
    }
  }

  expect_failures = [var.environment]
}

run "bad_existing_table_arn_refused" {
  command = plan

  variables {
    existing_table_arn = "shared-sessions"
  }

  expect_failures = [var.existing_table_arn]
}
