terraform {
  # 1.5 is the oldest release tested (tools/tfcheck builds terraform 1.5.7).
  required_version = ">= 1.5.0"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # 6.28: response_streaming_invoke_arn, invoked_via_function_url;
      # 6.37: global_secondary_index.key_schema without the GSI removal bug.
      version = ">= 6.37.0"
    }
    random = {
      source = "hashicorp/random"
      # 3.6: random_bytes.
      version = ">= 3.6.0"
    }
  }
}
