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
