package invokeapi_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/mcpfn/mcpfn/test/lambdafront/internal/invokeapi"
)

func newServer(t *testing.T, invoke func(context.Context, []byte) ([]byte, error)) (*invokeapi.Server, *awslambda.Client) {
	t.Helper()
	s := invokeapi.New("fn", invoke)
	s.Unexpected = t.Errorf
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); s.Close() })
	return s, awslambda.New(awslambda.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(hs.URL),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "test-secret"}, nil
		}),
	})
}

func echo(_ context.Context, p []byte) ([]byte, error) { return p, nil }

// TestWire drives the server with the real SDK client: each invocation type,
// an unknown function, a payload too large, injected faults.
func TestWire(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, c := newServer(t, echo)

	out, err := c.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("fn"), Payload: []byte(`{"a":1}`)})
	if err != nil || out.StatusCode != 200 || string(out.Payload) != `{"a":1}` || out.FunctionError != nil {
		t.Fatalf("RequestResponse: %+v %v", out, err)
	}
	if d := <-s.Deliveries(); d.Async || string(d.Payload) != `{"a":1}` {
		t.Errorf("RequestResponse delivery: %+v", d)
	}

	gate := make(chan struct{})
	s.Hold(gate)
	out, err = c.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("arn:aws:lambda:us-east-1:123456789012:function:fn"),
		InvocationType: types.InvocationTypeEvent, Payload: []byte(`{"b":2}`)})
	if err != nil || out.StatusCode != 202 || len(out.Payload) != 0 {
		t.Fatalf("Event: %+v %v", out, err)
	}
	select {
	case d := <-s.Deliveries():
		t.Fatalf("Event delivered before the gate opened: %+v", d)
	default:
	}
	close(gate)
	if d := <-s.Deliveries(); !d.Async || string(d.Payload) != `{"b":2}` || d.Err != nil {
		t.Errorf("Event delivery: %+v", d)
	}
	if n := s.Accepted(); n != 1 {
		t.Errorf("Accepted = %d, want 1", n)
	}

	out, err = c.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("fn"), InvocationType: types.InvocationTypeDryRun})
	if err != nil || out.StatusCode != 204 {
		t.Errorf("DryRun: %+v %v", out, err)
	}

	_, err = c.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("other"), InvocationType: types.InvocationTypeEvent, Payload: []byte(`{}`)})
	if nf := (*types.ResourceNotFoundException)(nil); !errors.As(err, &nf) {
		t.Errorf("unknown function: %v, want ResourceNotFoundException", err)
	}

	_, err = c.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("fn"), InvocationType: types.InvocationTypeEvent,
		Payload: []byte(`"` + strings.Repeat("x", 1<<20) + `"`)})
	if tl := (*types.RequestTooLargeException)(nil); !errors.As(err, &tl) {
		t.Errorf("payload too large: %v, want RequestTooLargeException", err)
	}

	// One throttle: the SDK's standard retryer tries again.
	s.Fail(invokeapi.Fault{Status: 429, Type: "TooManyRequestsException"})
	out, err = c.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("fn"), InvocationType: types.InvocationTypeEvent, Payload: []byte(`{}`)})
	if err != nil || out.StatusCode != 202 {
		t.Errorf("after one throttle: %+v %v", out, err)
	}
	<-s.Deliveries()
	// Access denied is not retried.
	s.Fail(invokeapi.Fault{Status: 403, Type: "AccessDeniedException"})
	_, err = c.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("fn"), InvocationType: types.InvocationTypeEvent, Payload: []byte(`{}`)})
	if err == nil || !strings.Contains(err.Error(), "AccessDeniedException") {
		t.Errorf("access denied: %v", err)
	}
	if n := s.Accepted(); n != 2 {
		t.Errorf("Accepted = %d, want 2", n)
	}
}

// TestFunctionError: a failed invocation is reported as a function error.
func TestFunctionError(t *testing.T) {
	t.Parallel()
	_, c := newServer(t, func(context.Context, []byte) ([]byte, error) { return nil, errors.New("boom") })
	out, err := c.Invoke(context.Background(), &awslambda.InvokeInput{FunctionName: aws.String("fn"), Payload: []byte(`{}`)})
	if err != nil || out.FunctionError == nil || *out.FunctionError != "Unhandled" || !strings.Contains(string(out.Payload), "boom") {
		t.Fatalf("function error: %+v %v", out, err)
	}
}

// TestRetries: a failed Event invocation is run again, Retries times.
func TestRetries(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	runs := 0
	s, c := newServer(t, func(context.Context, []byte) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		runs++
		if runs < 3 {
			return nil, errors.New("timed out")
		}
		return []byte(`{}`), nil
	})
	s.Retries = 2
	if _, err := c.Invoke(context.Background(), &awslambda.InvokeInput{FunctionName: aws.String("fn"), InvocationType: types.InvocationTypeEvent, Payload: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	for i, wantErr := range []bool{true, true, false} {
		if d := <-s.Deliveries(); (d.Err != nil) != wantErr {
			t.Errorf("run %d: %+v", i+1, d)
		}
	}
}
