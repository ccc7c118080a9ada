output "mcp_endpoint" {
  description = "The URL MCP clients connect to (the Function URL + \"mcp\")."
  value       = module.mcp.mcp_endpoint
}

output "invoke_mode" {
  description = "RESPONSE_STREAM (streaming) or BUFFERED: how the function must start adapters/lambda (MCPFN_STREAMING says the same)."
  value       = module.mcp.invoke_mode
}

output "environment" {
  description = "The environment the function gets (besides Lambda's own: AWS_REGION, the role's credentials, AWS_LAMBDA_LOG_FORMAT=JSON): to run the same bootstrap locally, e.g. under the Lambda Runtime Interface Emulator."
  value       = module.mcp.environment
}

output "function_name" {
  description = "The function's name (aws lambda invoke, logs)."
  value       = module.mcp.function_name
}

output "log_group_name" {
  description = "The function's CloudWatch log group."
  value       = module.mcp.log_group_name
}

output "secret_name" {
  description = "The --secret-id of the HMAC key secret (aws secretsmanager put-secret-value rotates the key)."
  value       = module.mcp.secret_name
}

output "region" {
  description = "The region (for SigV4 signing with AWS_IAM)."
  value       = data.aws_region.current.region
}
