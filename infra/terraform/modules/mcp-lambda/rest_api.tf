# Optional: an API Gateway REST API in front of the function. With
# streaming, a Lambda proxy integration on the response-streaming-invocations
# URI with response_transfer_mode STREAM (adapters/lambda answers these
# events streamed); without, the plain invocations URI, BUFFERED. HTTP APIs
# cannot stream, so there is no HTTP API option.

resource "aws_api_gateway_rest_api" "this" {
  count = var.enable_rest_api ? 1 : 0

  name        = var.name
  description = var.streaming ? "MCP server ${var.name} (mcpfn), response streaming" : "MCP server ${var.name} (mcpfn), buffered"
  tags        = var.tags

  endpoint_configuration {
    types = ["REGIONAL"]
  }
}

resource "aws_api_gateway_resource" "proxy" {
  count = var.enable_rest_api ? 1 : 0

  rest_api_id = aws_api_gateway_rest_api.this[0].id
  parent_id   = aws_api_gateway_rest_api.this[0].root_resource_id
  path_part   = "{proxy+}"
}

resource "aws_api_gateway_method" "proxy" {
  count = var.enable_rest_api ? 1 : 0

  rest_api_id   = aws_api_gateway_rest_api.this[0].id
  resource_id   = aws_api_gateway_resource.proxy[0].id
  http_method   = "ANY"
  authorization = var.authorization_type
}

resource "aws_api_gateway_integration" "proxy" {
  count = var.enable_rest_api ? 1 : 0

  rest_api_id             = aws_api_gateway_rest_api.this[0].id
  resource_id             = aws_api_gateway_resource.proxy[0].id
  http_method             = aws_api_gateway_method.proxy[0].http_method
  type                    = "AWS_PROXY"
  integration_http_method = "POST"
  uri                     = var.streaming ? aws_lambda_function.this.response_streaming_invoke_arn : aws_lambda_function.this.invoke_arn
  response_transfer_mode  = var.streaming ? "STREAM" : "BUFFERED"
  # Streamed integrations may run up to 15 minutes, as the function does;
  # buffered ones 29 seconds (API Gateway's default quota).
  timeout_milliseconds = var.streaming ? var.timeout * 1000 : min(var.timeout * 1000, 29000)
}

resource "aws_api_gateway_deployment" "this" {
  count = var.enable_rest_api ? 1 : 0

  rest_api_id = aws_api_gateway_rest_api.this[0].id

  triggers = {
    redeployment = sha1(jsonencode([
      aws_api_gateway_resource.proxy[0].id,
      aws_api_gateway_method.proxy[0].id,
      aws_api_gateway_method.proxy[0].authorization,
      aws_api_gateway_integration.proxy[0].id,
      aws_api_gateway_integration.proxy[0].uri,
      aws_api_gateway_integration.proxy[0].response_transfer_mode,
      aws_api_gateway_integration.proxy[0].timeout_milliseconds,
    ]))
  }

  lifecycle {
    create_before_destroy = true
  }
}

resource "aws_api_gateway_stage" "this" {
  count = var.enable_rest_api ? 1 : 0

  rest_api_id   = aws_api_gateway_rest_api.this[0].id
  deployment_id = aws_api_gateway_deployment.this[0].id
  stage_name    = var.rest_api_stage
  tags          = var.tags
}

# InvokeWithResponseStream is authorised by lambda:InvokeFunction.
resource "aws_lambda_permission" "rest_api" {
  count = var.enable_rest_api ? 1 : 0

  statement_id  = "AllowRestApiInvoke"
  action        = "lambda:InvokeFunction"
  function_name = aws_lambda_function.this.function_name
  principal     = "apigateway.amazonaws.com"
  source_arn    = "${aws_api_gateway_rest_api.this[0].execution_arn}/*/*"
}
