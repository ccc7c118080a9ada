output "function_name" {
  description = "Name of the Lambda function."
  value       = aws_lambda_function.this.function_name
}

output "function_arn" {
  description = "ARN of the Lambda function."
  value       = aws_lambda_function.this.arn
}

output "function_url" {
  description = "The Function URL (RESPONSE_STREAM), ending in a slash."
  value       = aws_lambda_function_url.this.function_url
}

output "mcp_endpoint" {
  description = "The MCP endpoint on the Function URL: function_url + \"mcp\"."
  value       = "${aws_lambda_function_url.this.function_url}mcp"
}

output "rest_api_endpoint" {
  description = "The MCP endpoint on the REST API (stage URL + \"/mcp\"); null without enable_rest_api."
  value       = var.enable_rest_api ? "${aws_api_gateway_stage.this[0].invoke_url}/mcp" : null
}

output "table_name" {
  description = "Name of the DynamoDB session table (MCPFN_DYNAMODB_TABLE)."
  value       = aws_dynamodb_table.sessions.name
}

output "table_arn" {
  description = "ARN of the DynamoDB session table."
  value       = aws_dynamodb_table.sessions.arn
}

output "secret_arn" {
  description = "ARN of the Secrets Manager secret holding the HMAC keys (MCPFN_KEYS_SECRET_ID)."
  value       = aws_secretsmanager_secret.keys.arn
}

output "secret_name" {
  description = "Name of the Secrets Manager secret holding the HMAC keys: the --secret-id of put-secret-value."
  value       = aws_secretsmanager_secret.keys.name
}

output "role_arn" {
  description = "ARN of the function's IAM role."
  value       = aws_iam_role.function.arn
}

output "log_group_name" {
  description = "CloudWatch log group of the function."
  value       = aws_cloudwatch_log_group.function.name
}
