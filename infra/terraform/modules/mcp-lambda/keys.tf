# The HMAC keys that seal requestState (store/secretsmanager). Every version's
# SecretString is {"key":"<standard base64 of at least 32 random bytes>"}:
# AWSCURRENT signs, AWSPENDING and AWSPREVIOUS still verify.
resource "aws_secretsmanager_secret" "keys" {
  name                    = local.secret_name
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
  count  = var.create_initial_key ? 1 : 0
  length = 32
}

resource "aws_secretsmanager_secret_version" "initial" {
  count         = var.create_initial_key ? 1 : 0
  secret_id     = aws_secretsmanager_secret.keys.id
  secret_string = jsonencode({ key = random_bytes.state_key[0].base64 })
}

resource "aws_secretsmanager_secret_rotation" "keys" {
  count = var.rotation_lambda_arn == null ? 0 : 1

  secret_id           = aws_secretsmanager_secret.keys.id
  rotation_lambda_arn = var.rotation_lambda_arn
  # The first rotation waits for the schedule: the initial key is fresh.
  rotate_immediately = false

  rotation_rules {
    automatically_after_days = var.rotation_days
  }
}
