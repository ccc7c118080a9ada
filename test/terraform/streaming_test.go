package terraform_test

import (
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// TestStreaming checks that both front doors follow var.streaming: with it
// (the default) the Function URL's invoke mode is RESPONSE_STREAM and the
// REST API's integration is the response-streaming-invocations URI with
// transfer mode STREAM; without it, BUFFERED and the invocations URI. The
// function's MCPFN_STREAMING says the same ("1" or "0"), so that the
// program starts adapters/lambda in the mode the integration uses.
func TestStreaming(t *testing.T) {
	t.Parallel()
	m := loadModule(t, lambdaModule)
	fn := "aws_lambda_function." + m.one(t, "resource", "aws_lambda_function").Labels[1]
	url := m.one(t, "resource", "aws_lambda_function_url")
	in := m.one(t, "resource", "aws_api_gateway_integration")
	for a, want := range map[string]string{"type": "AWS_PROXY", "integration_http_method": "POST"} {
		if got := literalString(t, attr(t, in, a)); got != want {
			t.Errorf("aws_api_gateway_integration %s = %q, want %q", a, got, want)
		}
	}
	if d := m.variableDefault(t, "streaming"); !d.RawEquals(cty.True) {
		t.Errorf("variable streaming defaults to %#v, want true", d)
	}
	for _, c := range []struct {
		streaming                           bool
		invokeMode, transfer, uri, envValue string
	}{
		{true, "RESPONSE_STREAM", "STREAM", fn + ".response_streaming_invoke_arn", "1"},
		{false, "BUFFERED", "BUFFERED", fn + ".invoke_arn", "0"},
	} {
		ctx := m.fakesWith(map[string]cty.Value{"streaming": cty.BoolVal(c.streaming), "allowed_origins": cty.ListValEmpty(cty.String)})
		if got := eval(t, ctx, attr(t, url, "invoke_mode")).AsString(); got != c.invokeMode {
			t.Errorf("streaming = %v: aws_lambda_function_url invoke_mode = %q, want %s", c.streaming, got, c.invokeMode)
		}
		if got := eval(t, ctx, attr(t, in, "response_transfer_mode")).AsString(); got != c.transfer {
			t.Errorf("streaming = %v: aws_api_gateway_integration response_transfer_mode = %q, want %s", c.streaming, got, c.transfer)
		}
		if got := eval(t, ctx, attr(t, in, "uri")).AsString(); got != c.uri {
			t.Errorf("streaming = %v: aws_api_gateway_integration uri = %s, want %s", c.streaming, got, c.uri)
		}
		wiring := eval(t, ctx, m.local(t, "wiring"))
		if got := wiring.GetAttr("MCPFN_STREAMING").AsString(); got != c.envValue {
			t.Errorf("streaming = %v: MCPFN_STREAMING = %q, want %q", c.streaming, got, c.envValue)
		}
	}
}
