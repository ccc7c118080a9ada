output "url" {
  description = "URL of the function: the MCP endpoint."
  value       = google_cloudfunctions2_function.this.service_config[0].uri
}

output "service_account_email" {
  description = "Service account the function runs as."
  value       = google_service_account.function.email
}

output "state_key_secret_id" {
  description = "Secret Manager secret holding MCPFN_STATE_KEY (gcloud secrets versions add to rotate)."
  value       = google_secret_manager_secret.state_key.secret_id
}

output "environment" {
  description = "The function's plain environment variables (what the deploy kit reads); MCPFN_STATE_KEY comes on top, from the secret state_key_secret_id."
  value       = google_cloudfunctions2_function.this.service_config[0].environment_variables
}
