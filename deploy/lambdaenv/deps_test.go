package lambdaenv_test

import (
	"os/exec"
	"strings"
	"testing"
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
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	has := func(prefix string) bool {
		for _, d := range deps {
			if d == prefix || strings.HasPrefix(d, prefix+"/") {
				return true
			}
		}
		return false
	}
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
