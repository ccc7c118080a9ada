output "function_name" {
  description = "Name of the Lambda function."
  value       = aws_lambda_function.this.function_name
}

output "function_arn" {
  description = "ARN of the Lambda function."
  value       = aws_lambda_function.this.arn
}

output "function_url" {
  description = "The Function URL (invoke mode: the invoke_mode output), ending in a slash."
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

output "invoke_mode" {
  description = "The Function URL's invoke mode: RESPONSE_STREAM (streaming) or BUFFERED."
  value       = aws_lambda_function_url.this.invoke_mode
}

output "environment" {
  description = "The function's environment variables (what the deploy kit reads; no secret is among them). Lambda adds its own (AWS_REGION, the role's credentials, AWS_LAMBDA_LOG_FORMAT=JSON)."
  value       = aws_lambda_function.this.environment[0].variables
}

output "table_name" {
  description = "Name of the DynamoDB session table (MCPFN_DYNAMODB_TABLE): the module's, or existing_table_arn's."
  value       = local.table_name
}

output "table_arn" {
  description = "ARN of the DynamoDB session table: the module's, or existing_table_arn."
  value       = local.table_arn
}

output "secret_arn" {
  description = "ARN of the Secrets Manager secret holding the HMAC keys (MCPFN_KEYS_SECRET_ID): the module's, or existing_secret_arn."
  value       = local.secret_arn
}

output "secret_name" {
  description = "The --secret-id of put-secret-value for the HMAC keys: the name of the module's secret, or existing_secret_arn."
  value       = local.create_secret ? aws_secretsmanager_secret.keys[0].name : var.existing_secret_arn
}

output "role_arn" {
  description = "ARN of the function's IAM role."
  value       = aws_iam_role.function.arn
}

output "log_group_name" {
  description = "CloudWatch log group of the function."
  value       = aws_cloudwatch_log_group.function.name
}
