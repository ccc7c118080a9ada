package lambdaenv_test

import (
	"testing"

	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// TestDependencies: a function built with the kit links the AWS service
// clients it needs, not the SDK's configuration chain (profiles, SSO, IMDS:
// about 2 MB that a Lambda function does not use), no other platform's
// SDK, and no OpenTelemetry (Options.Flush takes the SDK's providers
// through lambda.Flusher).
func TestDependencies(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: runs go list")
	}
	has := mcptest.Links(t, ".")
	for _, want := range []string{"github.com/aws/aws-sdk-go-v2/service/dynamodb", "github.com/aws/aws-sdk-go-v2/service/secretsmanager",
		"github.com/aws/aws-lambda-go/lambda", "github.com/mcpfn/mcpfn/auth"} {
		if !has(want) {
			t.Errorf("the kit does not link %s", want)
		}
	}
	for _, bad := range []string{"github.com/aws/aws-sdk-go-v2/config", "github.com/aws/aws-sdk-go-v2/feature/ec2/imds",
		"github.com/aws/aws-sdk-go-v2/service/sso", "github.com/GoogleCloudPlatform", "cloud.google.com", "go.opentelemetry.io"} {
		if has(bad) {
			t.Errorf("the kit links %s", bad)
		}
	}
}
