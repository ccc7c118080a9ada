// Package lambdalocal runs an AWS Lambda function on this machine the way
// Lambda runs it, behind the HTTP front door that AWS puts before it, so
// that the function's own binary (a provided.al2023 bootstrap) can be
// called, streamed responses included, without an AWS account or an
// emulator. `mcpfn dev` serves a Lambda function with it; it depends on
// the standard library only.
//
//	fn, err := lambdalocal.NewFunction(lambdalocal.Config{
//		Bootstrap: "./bootstrap", // go build -tags lambda.norpc -o bootstrap .
//		Env:       []string{"MCPFN_STREAMING=1"},
//		Output:    os.Stderr,
//	})
//	...
//	defer fn.Close()
//	http.ListenAndServe("127.0.0.1:8080", &lambdalocal.Door{Function: fn, Mode: lambdalocal.Streaming})
//
// # The function
//
// [Function] serves the Lambda Runtime API
// (https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html) on
// loopback, one endpoint per process, and starts the bootstrap with
// AWS_LAMBDA_RUNTIME_API pointing there, on the first invocation, as a
// Lambda sandbox does. Each invocation is handed over as the function asks
// for it (GET .../invocation/next), and its response (POST
// .../invocation/ID/response, buffered or streamed with chunked encoding,
// or .../error) is handed back as it arrives: the bytes of a streamed
// response reach the caller flush by flush. The function runs with the
// variables Lambda sets (AWS_LAMBDA_FUNCTION_NAME, AWS_REGION, ...) added to
// the environment given. With [Config.Concurrency] above 1, one process
// runs several invocations at once, as Lambda Managed Instances do
// (AWS_LAMBDA_MAX_CONCURRENCY, which aws-lambda-go honours), and they share
// its memory. Timeouts, processes that exit and clients that go away are
// handled as Lambda handles them (see [Function]).
//
// # The door
//
// [Door] is an [http.Handler] that turns each request into the event of a
// Lambda Function URL ([FunctionURL], payload format 2.0), an API Gateway
// REST API ([RESTAPI], the proxy integration's payload format 1.0) or an
// HTTP API ([HTTPAPI]), invokes the function through any [Invoker], and
// turns the answer back into the HTTP response, passing a streamed one
// (invoke mode RESPONSE_STREAM, [Streaming]) on chunk by chunk. A function
// that answers in the other invoke mode gets 502, as on AWS; so does a
// function error. A request for a Host other than a loopback name or the
// address it reached is refused, as AWS routes by Host.
//
// # The services around it
//
// [SecretsManager] serves the read operations of AWS Secrets Manager for a
// fixed set of secrets, and [InvokeAPI] the Lambda Invoke API (synchronous
// and asynchronous invocations) of one function: with
// AWS_ENDPOINT_URL_SECRETS_MANAGER and AWS_ENDPOINT_URL_LAMBDA pointing at
// them (and dummy credentials), a function that reads its keys from a secret
// (deploy/lambdaenv's MCPFN_KEYS_SECRET_ID) or starts asynchronous
// invocations of itself (the Lambda task runner) runs unchanged, its AWS SDK
// clients included.
//
// What is not imitated: the sandbox's operating system, file system, user
// and limits (the bootstrap is built for and runs on this machine, as this
// user, in its own directory), the freezing of a sandbox between
// invocations (its goroutines go on running), IAM, and the TLS of the AWS
// endpoints.
package lambdalocal
