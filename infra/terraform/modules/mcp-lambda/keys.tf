# The HMAC keys that seal requestState (store/secretsmanager). Every version's
# SecretString is {"key":"<standard base64 of at least 32 random bytes>"}:
# AWSCURRENT signs, AWSPENDING and AWSPREVIOUS still verify.
# With existing_secret_arn the module creates none (nor its first version
# or rotation): that secret must hold a version in this format.
resource "aws_secretsmanager_secret" "keys" {
  count = local.create_secret ? 1 : 0

  name                    = local.new_secret_name
  description             = "HMAC keys sealing MCP requestState of ${var.name} (mcpfn store/secretsmanager)"
  kms_key_id              = var.secret_kms_key_arn
  recovery_window_in_days = var.secret_recovery_window_days
  tags                    = var.tags
}

# The first key. It is in the Terraform state (as any secret_string is):
# keep the state encrypted, or set create_initial_key = false and put the
# first version yourself. Later versions come from put-secret-value or the
# rotation function; Terraform ignores them (version_stages is not managed
# here), so a rotation shows no drift and apply never rolls the key back.
resource "random_bytes" "state_key" {
  count  = local.create_secret && var.create_initial_key ? 1 : 0
  length = 32
}

resource "aws_secretsmanager_secret_version" "initial" {
  count         = local.create_secret && var.create_initial_key ? 1 : 0
  secret_id     = aws_secretsmanager_secret.keys[0].id
  secret_string = jsonencode({ key = random_bytes.state_key[0].base64 })
}

resource "aws_secretsmanager_secret_rotation" "keys" {
  count = local.create_secret && var.rotation_lambda_arn != null ? 1 : 0

  secret_id           = aws_secretsmanager_secret.keys[0].id
  rotation_lambda_arn = var.rotation_lambda_arn
  # The first rotation waits for the schedule: the initial key is fresh.
  rotate_immediately = false

  rotation_rules {
    automatically_after_days = var.rotation_days
  }
}
