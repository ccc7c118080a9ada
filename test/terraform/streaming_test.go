package terraform_test

import "testing"

// TestStreaming checks that both front doors stream: the Function URL's
// invoke mode, and the REST API's integration (the
// response-streaming-invocations URI with transfer mode STREAM).
func TestStreaming(t *testing.T) {
	t.Parallel()
	m := loadModule(t, lambdaModule)
	ctx := m.fakes()
	fn := "aws_lambda_function." + m.one(t, "resource", "aws_lambda_function").Labels[1]
	url := m.one(t, "resource", "aws_lambda_function_url")
	if got := literalString(t, attr(t, url, "invoke_mode")); got != "RESPONSE_STREAM" {
		t.Errorf("aws_lambda_function_url invoke_mode = %q, want RESPONSE_STREAM", got)
	}
	in := m.one(t, "resource", "aws_api_gateway_integration")
	for a, want := range map[string]string{"type": "AWS_PROXY", "integration_http_method": "POST", "response_transfer_mode": "STREAM"} {
		if got := literalString(t, attr(t, in, a)); got != want {
			t.Errorf("aws_api_gateway_integration %s = %q, want %q", a, got, want)
		}
	}
	if got, want := eval(t, ctx, attr(t, in, "uri")).AsString(), fn+".response_streaming_invoke_arn"; got != want {
		t.Errorf("aws_api_gateway_integration uri = %s, want %s", got, want)
	}
}
