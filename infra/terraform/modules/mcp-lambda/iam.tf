# The function's role: least privilege. The DynamoDB actions are exactly
# dynamo.IAMActions on the table and its indexes, the Secrets Manager actions
# exactly secretsmanager.IAMActions on the secret (test/terraform checks
# both against the Go code), plus writing to its own log group and, with
# tasks, invoking the function itself (SelfInvoke). The table
# and the secret are the module's, or those of existing_table_arn and
# existing_secret_arn: nothing else.

data "aws_iam_policy_document" "assume" {
  statement {
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "function" {
  name_prefix        = "${substr(var.name, 0, 37)}-"
  description        = "Role of the MCP server function ${var.name}"
  assume_role_policy = data.aws_iam_policy_document.assume.json
  tags               = var.tags
}

data "aws_iam_policy_document" "function" {
  statement {
    sid = "SessionTable"
    actions = [
      "dynamodb:DeleteItem",
      "dynamodb:GetItem",
      "dynamodb:PutItem",
      "dynamodb:Query",
      "dynamodb:UpdateItem",
    ]
    resources = [
      local.table_arn,
      "${local.table_arn}/index/*",
    ]
  }

  statement {
    sid = "StateKeys"
    actions = [
      "secretsmanager:DescribeSecret",
      "secretsmanager:GetSecretValue",
    ]
    resources = [local.secret_arn]
  }

  statement {
    sid = "Logs"
    actions = [
      "logs:CreateLogStream",
      "logs:PutLogEvents",
    ]
    resources = ["${aws_cloudwatch_log_group.function.arn}:*"]
  }
}

resource "aws_iam_role_policy" "function" {
  name   = "mcp-server"
  role   = aws_iam_role.function.id
  policy = data.aws_iam_policy_document.function.json
}

# With tasks, the function invokes itself asynchronously (the deploy kit's
# lambda task runner: Invoke with InvocationType Event, FunctionName
# AWS_LAMBDA_FUNCTION_NAME, unqualified): exactly lambda:InvokeFunction on
# the function's own unqualified ARN. A separate policy, so that the
# function (which the role policy names) does not depend on it; the
# Function URL does (function.tf).
data "aws_iam_policy_document" "tasks" {
  count = var.tasks ? 1 : 0

  statement {
    sid       = "SelfInvoke"
    actions   = ["lambda:InvokeFunction"]
    resources = [aws_lambda_function.this.arn]
  }
}

resource "aws_iam_role_policy" "tasks" {
  count = var.tasks ? 1 : 0

  name   = "mcp-server-tasks"
  role   = aws_iam_role.function.id
  policy = data.aws_iam_policy_document.tasks[0].json
}

# A secret encrypted with a customer managed key also needs kms:Decrypt.
data "aws_iam_policy_document" "kms" {
  count = var.secret_kms_key_arn == null ? 0 : 1

  statement {
    sid       = "StateKeysDecrypt"
    actions   = ["kms:Decrypt"]
    resources = [var.secret_kms_key_arn]

    condition {
      test     = "StringEquals"
      variable = "kms:ViaService"
      values   = ["secretsmanager.${data.aws_region.current.region}.amazonaws.com"]
    }
  }
}

resource "aws_iam_role_policy" "kms" {
  count = var.secret_kms_key_arn == null ? 0 : 1

  name   = "mcp-server-kms"
  role   = aws_iam_role.function.id
  policy = data.aws_iam_policy_document.kms[0].json
}

data "aws_region" "current" {}

data "aws_partition" "current" {}
