# The data sources the repository's plans read, rendered by the stage's aws provider
# (tfcheck.sh --outputs): want.json is what the real provider renders (the full stage writes and
# compares it), and the fast stage requires the schema provider to render the same. Offline:
# fake credentials, no account lookup; only data sources, which these read without calling AWS.
terraform {
  required_providers {
    aws = {
      source = "hashicorp/aws"
    }
  }
}

provider "aws" {
  region                      = "eu-west-1"
  access_key                  = "tfcheck"
  secret_key                  = "tfcheck"
  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
}

data "aws_region" "current" {}

data "aws_region" "named" {
  region = "us-east-1"
}

data "aws_partition" "current" {}

# As modules/mcp-lambda's iam.tf writes them.
data "aws_iam_policy_document" "assume" {
  statement {
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com"]
    }
  }
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
      "arn:aws:dynamodb:eu-west-1:123456789012:table/t",
      "arn:aws:dynamodb:eu-west-1:123456789012:table/t/index/*",
    ]
  }

  statement {
    sid       = "SelfInvoke"
    actions   = ["lambda:InvokeFunction"]
    resources = ["arn:aws:lambda:eu-west-1:123456789012:function:f"]
  }

  statement {
    sid       = "StateKeysDecrypt"
    actions   = ["kms:Decrypt"]
    resources = ["arn:aws:kms:eu-west-1:123456789012:key/k"]

    condition {
      test     = "StringEquals"
      variable = "kms:ViaService"
      values   = ["secretsmanager.${data.aws_region.current.region}.amazonaws.com"]
    }
  }
}

# What else the data source renders: Deny, not_actions and not_resources, the "*" principal,
# several identifiers, several values and variables of a condition, an id, a policy variable.
data "aws_iam_policy_document" "others" {
  policy_id = "tfcheck"

  statement {
    effect        = "Deny"
    not_actions   = ["s3:GetObject", "s3:PutObject"]
    not_resources = ["arn:aws:s3:::b/&{aws:username}/*"]

    principals {
      type        = "*"
      identifiers = ["*"]
    }
  }

  statement {
    actions   = ["sts:AssumeRole", "sts:TagSession"]
    resources = ["*"]

    principals {
      type        = "AWS"
      identifiers = ["arn:aws:iam::123456789012:root", "arn:aws:iam::210987654321:root"]
    }

    condition {
      test     = "StringEquals"
      variable = "aws:PrincipalTag/team"
      values   = ["mcp", "ops"]
    }

    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["true"]
    }

    condition {
      test     = "StringEquals"
      variable = "aws:RequestedRegion"
      values   = ["eu-west-1"]
    }
  }
}

output "region" {
  value = data.aws_region.current
}

output "region_named" {
  value = data.aws_region.named
}

output "partition" {
  value = data.aws_partition.current
}

output "policies" {
  value = { for k, d in {
    assume   = data.aws_iam_policy_document.assume
    function = data.aws_iam_policy_document.function
    others   = data.aws_iam_policy_document.others
  } : k => { json = d.json, minified_json = d.minified_json, id = d.id } }
}
