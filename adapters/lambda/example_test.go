package lambda_test

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpfn/mcpfn/adapters/lambda"
)

// A Function URL event, as Lambda delivers it (shortened).
const functionURLEvent = `{
  "version": "2.0",
  "rawPath": "/mcp",
  "rawQueryString": "",
  "headers": {"content-type": "application/json", "host": "abc.lambda-url.us-east-1.on.aws"},
  "requestContext": {
    "domainName": "abc.lambda-url.us-east-1.on.aws",
    "http": {"method": "POST", "path": "/mcp", "protocol": "HTTP/1.1", "sourceIp": "203.0.113.7"}
  },
  "body": "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
  "isBase64Encoded": false
}`

func ExampleWrap() {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"method":%q,"path":%q,"from":%q,"got":%d}`, r.Method, r.URL.Path, r.RemoteAddr, len(body))
	})
	fn := lambda.Wrap(h, nil)

	res, _ := fn(context.Background(), []byte(functionURLEvent))
	r := res.(events.LambdaFunctionURLResponse)
	fmt.Println(r.StatusCode, r.Headers["Content-Type"])
	fmt.Println(r.Body)
	// Output:
	// 200 application/json
	// {"method":"POST","path":"/mcp","from":"203.0.113.7:0","got":40}
}

func ExampleWrap_streaming() {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 2 {
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush() // leaves the function now
		}
	})
	fn := lambda.Wrap(h, &lambda.Options{Streaming: true})

	res, _ := fn(context.Background(), []byte(functionURLEvent))
	r := res.(*events.LambdaFunctionURLStreamingResponse)
	defer r.Close()
	fmt.Println(r.StatusCode, r.Headers["Content-Type"])
	body, _ := io.ReadAll(r.Body)
	fmt.Printf("%q\n", body)
	// Output:
	// 200 text/event-stream
	// "data: 0\n\ndata: 1\n\n"
}

func ExampleRequestFromContext() {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch ev, _ := lambda.RequestFromContext(r.Context()); ev := ev.(type) {
		case *events.LambdaFunctionURLRequest:
			fmt.Println("function URL", ev.RequestContext.DomainName)
		case *events.APIGatewayProxyRequest:
			fmt.Println("REST API stage", ev.RequestContext.Stage)
		}
	})
	lambda.Wrap(h, nil)(context.Background(), []byte(functionURLEvent))
	// Output:
	// function URL abc.lambda-url.us-east-1.on.aws
}

func ExampleStart() {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	})
	// Blocks, serving invocations until the process ends.
	lambda.Start(mux, &lambda.Options{Streaming: true})
}

// printFlusher stands for the OpenTelemetry SDK's TracerProvider and
// MeterProvider, which are lambda.Flushers.
type printFlusher struct{}

func (printFlusher) ForceFlush(context.Context) error {
	fmt.Println("flushed")
	return nil
}

// With Options.Flush, the answer is a reader that aws-lambda-go sends and
// then closes; closing it flushes, before the function asks for the next
// invocation.
func ExampleOptions_flush() {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	})
	// In a function's main: lambda.Start(srv, &lambda.Options{Flush: []lambda.Flusher{tp, mp}}).
	fn := lambda.Wrap(h, &lambda.Options{Flush: []lambda.Flusher{printFlusher{}}})

	res, _ := fn(context.Background(), []byte(functionURLEvent))
	r := res.(io.ReadCloser)
	body, _ := io.ReadAll(r) // what aws-lambda-go posts as the response
	fmt.Println(string(body))
	r.Close()
	// Output:
	// {"statusCode":200,"headers":{"Content-Type":"text/plain; charset=utf-8"},"body":"ok","isBase64Encoded":false,"cookies":null}
	// flushed
}
