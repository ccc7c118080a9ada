package lambdaenv

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// TestLambdaTaskRunner: the runner invokes the function Lambda names in
// AWS_LAMBDA_FUNCTION_NAME, asynchronously, at the endpoint
// AWS_ENDPOINT_URL_LAMBDA overrides; without the name it is an error that
// names the variable. Not parallel: it sets the environment.
func TestLambdaTaskRunner(t *testing.T) {
	awsCfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}

	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "")
	if _, err := lambdaTaskRunner(awsCfg); err == nil || !strings.Contains(err.Error(), "AWS_LAMBDA_FUNCTION_NAME") {
		t.Errorf("without a function name: %v", err)
	}

	var got []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, r.URL.Path+" "+r.Header.Get("X-Amz-Invocation-Type")+" "+string(b))
		w.WriteHeader(http.StatusAccepted)
	}))
	defer hs.Close()
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "my-fn")
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", hs.URL)
	runner, err := lambdaTaskRunner(awsCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.Start(context.Background(), "task-1"); err != nil {
		t.Fatal(err)
	}
	want := `/2015-03-31/functions/my-fn/invocations Event {"mcpfnTask":{"taskId":"task-1"}}`
	if len(got) != 1 || got[0] != want {
		t.Errorf("invocations %q, want [%s]", got, want)
	}
}
