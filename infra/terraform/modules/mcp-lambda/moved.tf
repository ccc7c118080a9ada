# The table and the secret became optional (existing_table_arn,
# existing_secret_arn): states written before keep them, at index 0.
moved {
  from = aws_dynamodb_table.sessions
  to   = aws_dynamodb_table.sessions[0]
}

moved {
  from = aws_secretsmanager_secret.keys
  to   = aws_secretsmanager_secret.keys[0]
}
