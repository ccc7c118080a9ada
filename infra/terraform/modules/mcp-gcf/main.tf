# An MCP server on Cloud Functions (2nd gen). Checked by terraform fmt and
# HCL parsing only: the google provider is not built offline.
#
# The signing key of requestState is a Secret Manager secret exposed as
# MCPFN_STATE_KEY (base64 of 32 random bytes, as the deploy kit reads it):
# "latest" is resolved when an instance starts, so a new version reaches
# instances as they are replaced; state sealed with the old key then fails
# to open on new instances (the client starts over).

locals {
  # The server as an OAuth 2.1 protected resource (package auth), with var.auth.
  auth_settings = var.auth == null ? {} : {
    MCPFN_AUTH_RESOURCE      = var.auth.resource
    MCPFN_AUTH_ISSUER        = var.auth.issuer
    MCPFN_AUTH_JWKS_URL      = var.auth.jwks_url
    MCPFN_AUTH_SCOPES        = length(var.auth.scopes) > 0 ? join(" ", var.auth.scopes) : null
    MCPFN_AUTH_METADATA_URL  = var.auth.metadata_url
    MCPFN_AUTH_METADATA_PATH = var.auth.metadata_path
  }

  # What the deploy kit reads (besides MCPFN_STATE_KEY, from the secret).
  # MCPFN_MAX_INSTANCES is the bound of service_config: with 1, the kit
  # serves task tools, whose tasks live in the one instance's memory.
  wiring = merge({ for k, v in local.auth_settings : k => v if v != null }, {
    MCPFN_ALLOWED_ORIGINS = join(",", var.allowed_origins)
    MCPFN_LOG_LEVEL       = var.log_level
    MCPFN_MAX_INSTANCES   = tostring(var.max_instance_count)
  })
}

resource "google_service_account" "function" {
  project      = var.project
  account_id   = substr("${var.name}-fn", 0, 30)
  display_name = "MCP server ${var.name}"
}

resource "google_secret_manager_secret" "state_key" {
  project   = var.project
  secret_id = "${var.name}-state-key"

  replication {
    auto {}
  }
}

resource "random_bytes" "state_key" {
  length = 32
}

resource "google_secret_manager_secret_version" "state_key" {
  secret      = google_secret_manager_secret.state_key.id
  secret_data = random_bytes.state_key.base64
}

resource "google_secret_manager_secret_iam_member" "function" {
  project   = var.project
  secret_id = google_secret_manager_secret.state_key.secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = "serviceAccount:${google_service_account.function.email}"
}

resource "google_storage_bucket_object" "source" {
  name   = "${var.name}/source-${filemd5(var.source_zip_path)}.zip"
  bucket = var.source_bucket
  source = var.source_zip_path
}

resource "google_cloudfunctions2_function" "this" {
  name     = var.name
  project  = var.project
  location = var.region

  build_config {
    runtime     = var.runtime
    entry_point = var.entry_point

    source {
      storage_source {
        bucket = var.source_bucket
        object = google_storage_bucket_object.source.name
      }
    }
  }

  service_config {
    available_memory      = var.memory
    timeout_seconds       = var.timeout_seconds
    max_instance_count    = var.max_instance_count
    service_account_email = google_service_account.function.email
    ingress_settings      = "ALLOW_ALL"

    environment_variables = merge(var.environment, local.wiring)

    secret_environment_variables {
      key        = "MCPFN_STATE_KEY"
      project_id = var.project
      secret     = google_secret_manager_secret.state_key.secret_id
      version    = "latest"
    }
  }

  depends_on = [google_secret_manager_secret_iam_member.function, google_secret_manager_secret_version.state_key]

  lifecycle {
    # A public function that checks no token is what a copy-paste of
    # public = true would give: refuse it unless asked for.
    precondition {
      condition     = !var.public || var.auth != null || var.allow_unauthenticated
      error_message = "public = true without auth lets anyone on the Internet call every tool, at your cost. Set auth (the server then checks OAuth access tokens), or set allow_unauthenticated = true if a public, unauthenticated server is really what you want."
    }
  }
}

resource "google_cloud_run_service_iam_member" "public" {
  count = var.public ? 1 : 0

  project  = var.project
  location = var.region
  service  = google_cloudfunctions2_function.this.service_config[0].service
  role     = "roles/run.invoker"
  member   = "allUsers"
}
