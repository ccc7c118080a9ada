output "mcp_endpoint" {
  description = "The MCP endpoint on the Function URL."
  value       = module.calculator.mcp_endpoint
}

output "function_url" {
  description = "The Function URL."
  value       = module.calculator.function_url
}

output "rest_api_endpoint" {
  description = "The MCP endpoint on the REST API (null unless enable_rest_api)."
  value       = module.calculator.rest_api_endpoint
}

output "secret_name" {
  description = "The secret holding the HMAC keys (for put-secret-value)."
  value       = module.calculator.secret_name
}

output "table_name" {
  description = "The DynamoDB session table."
  value       = module.calculator.table_name
}

output "region" {
  description = "The region (for SigV4 signing)."
  value       = data.aws_region.current.region
}
