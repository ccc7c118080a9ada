// Package lambda serves an [http.Handler], typically a [core.Server], on AWS
// Lambda.
//
// The adapter only translates: it turns the invocation event into an
// [*http.Request], runs the handler against a [http.ResponseWriter] of its own,
// and turns what the handler wrote back into the response the invoking
// service expects. Every protocol decision (status codes, headers, JSON or
// server-sent events) stays in the handler, so a server behaves the same on
// Lambda as on net/http or Google Cloud Functions.
//
// The API follows aws-lambda-go's lambdaurl package: [Wrap] is a pure function
// that can be tested without the Lambda runtime, and [Start] hands it to the
// runtime and blocks.
//
// # Quick start
//
// The deploy kit github.com/mcpfn/mcpfn/deploy/lambdaenv builds the server
// and these options from the environment the mcp-lambda Terraform module
// sets (shared sessions and keys, authorization, streaming): with it a
// whole function is one call, lambdaenv.Start. Wired by hand:
//
//	func main() {
//		srv := core.NewServer(impl, &core.ServerOptions{Keys: keys}) // keys shared by every instance
//		lambda.Start(srv, &lambda.Options{Streaming: true})
//	}
//
// Build the function for the provided.al2023 runtime, for the function's
// architecture (arm64 is the Terraform module's default; amd64 for x86_64),
// with
//
//	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -o bootstrap .
//
// The lambda.norpc tag drops aws-lambda-go's support for the retired go1.x
// runtime; it is optional but makes the binary smaller.
//
// # Many instances
//
// Lambda runs one instance of the function per concurrent request, and
// retries may reach any of them. A [core.Server] without
// ServerOptions.Keys seals the requestState of multi round-trip requests
// with a random key of its own, which no other instance has: the retry of
// such a request on another instance fails with -32602 "Invalid or expired
// requestState". [Wrap] (and so [Start]) therefore logs one warning at init
// when the handler is such a server, naming the fix: MCPFN_KEYS_SECRET_ID
// with deploy/lambdaenv, or ServerOptions.Keys (core.StaticKeys from a
// secret, or a core.KeyProvider such as store/secretsmanager). The instance
// that receives a state sealed with a key it does not have logs that too,
// at level warn, at most once a minute; the answer on the wire is the same
// -32602 error. Legacy (2025-*) sessions need a shared
// ServerOptions.SessionStore (store/dynamo) for the same reason.
//
// Logs go to [Options.Logger]; when it is nil, to the server's logger (for
// a [core.Server]) or slog.Default(), never nowhere.
//
// # Event sources
//
// [Wrap] recognises the event from its shape, so one function can sit behind
// several integrations at once:
//
//   - API Gateway REST APIs (proxy integration, payload format 1.0), including
//     HTTP APIs configured with payload format 1.0;
//   - API Gateway HTTP APIs (payload format 2.0);
//   - Lambda Function URLs (same shape as 2.0, recognised by their
//     lambda-url domain name);
//   - Application Load Balancer target groups, with or without multi-value
//     headers.
//
// The request carries the method, the path and query string, the headers
// (multi-value where the event has them), the cookies of 2.0 events as a
// Cookie header, the body (base64-decoded where the event says so), Host from
// the Host header or the domain name, and RemoteAddr as "ip:0" built from the
// source IP the event reports (for ALB, the last X-Forwarded-For entry). The
// URL holds only the path and query, as in a request received by
// [http.Server]; the scheme the client used is in the X-Forwarded-Proto
// header, and r.TLS is nil because TLS ends at the AWS front end. Its
// X-Amzn-Trace-Id header is the invocation's X-Ray trace header (the
// Runtime API's Lambda-Runtime-Trace-Id) when the runtime gives one,
// replacing the event's: the same trace, with the function's segment as
// Parent (the otel module links its server spans to it).
// API Gateway 2.0 events keep the stage prefix in the path when the stage is
// not $default; use [http.StripPrefix] if the handler should not see it.
//
// # Tasks
//
// A tool call that the server answers with a task (the Tasks extension,
// io.modelcontextprotocol/tasks) must outlive its invocation, which Lambda
// freezes once the response is sent. The runner of module
// github.com/mcpfn/mcpfn/adapters/lambda/taskrunner starts each task with
// an asynchronous invocation of the function itself, whose event is
//
//	{"mcpfnTask":{"taskId":"<id>"}}
//
// ([TaskEvent]). [Wrap] recognises that event by its one top-level key,
// which no AWS integration's event has, and hands the id to the handler's
// RunTask method ([*core.Server] has it), which runs the task only if the
// task store holds it, it is still to run, and no other invocation holds
// its lease; the outcome goes to the store, and the invocation answers a
// [TaskAnswer]. Any other shape carrying the key (an extra key at either
// level, an id that is not 1 to [MaxTaskIDLen] bytes of printable ASCII
// without spaces, a payload over 1 KiB) is refused and logged, and runs
// nothing.
//
// The event carries no secret and no input: what a task runs, and for whom,
// is in its stored record, so an event that names a task cannot make it do
// anything else, and one that names no stored task costs one read of the
// store. Callers of a Function URL or an API Gateway integration cannot
// send one at all: what they send becomes fields inside the integration's
// event. Sending one takes lambda:InvokeFunction on the function.
//
// The task's context is the invocation's, ending two seconds before the
// invocation's deadline (or a quarter of the time left, if that is less),
// so that a task that runs out of time is recorded as such before Lambda
// stops the function. A task whose invocation is killed, or frozen, all the
// same ends failed once its lease has passed (core.ServerOptions.TaskLease),
// whether a poll or Lambda's retry of the invocation notices it first; it
// is not run again. An error of RunTask (the store could not be reached)
// is the invocation's error, so Lambda retries the invocation (twice by
// default); a refused event, an unknown task or one with nothing to run is
// answered without an error, and not retried.
//
// The tasks need a store that every instance shares (store/dynamo's
// TaskStore): the invocation that runs a task is rarely the one that
// created it. deploy/lambdaenv wires the runner and the store with
// MCPFN_DYNAMODB_TABLE (the Lambda runner is its default on Lambda). A
// server with task tools but the in-process runner (whose tasks Lambda
// freezes with the sandbox) or tasks in the instance's memory makes [Wrap]
// log one error at init naming the fix.
//
// # Buffered and streaming responses
//
// By default the response is buffered: the handler runs to completion and its
// status, headers and body are returned in the integration's response format
// (multi-value headers for REST APIs and multi-value ALB target groups,
// Set-Cookie as the cookies list for 2.0 events and Function URLs). Bodies
// that are not valid UTF-8 text of a textual content type are base64-encoded.
// A server-sent event stream is complete in a buffered response: every event
// the handler wrote, in order.
//
// HTTP APIs, Function URLs and load balancers without multi-value headers
// take one value per header, so repeated headers are joined with commas. For
// a load balancer that includes Set-Cookie: enable multi-value headers on the
// target group if the handler sets several cookies.
//
// With [Options.Streaming] set, responses to Function URL events (invoke mode
// RESPONSE_STREAM) and to REST API events (a response-streaming-invocations
// integration with transfer mode STREAM) are streamed: the status and headers
// leave when the handler first writes or flushes, and every
// [http.Flusher.Flush] pushes what has been written so far to the client.
// HTTP APIs and load balancers cannot stream; their events are answered
// buffered even when Streaming is set, and the first such event of each
// integration logs a warning that the configuration expects streaming where
// there is none.
//
// The invoke mode of a Function URL (BUFFERED or RESPONSE_STREAM) and the
// transfer mode of a REST API integration are not in the event, so a
// mismatch there cannot be seen from inside the function: a buffered
// response to a streaming Function URL reaches the client as the JSON of
// the response object, and a streamed response to a buffered URL as its
// prelude and body bytes. Set Streaming from the same source as the
// integration (the mcp-lambda Terraform module sets MCPFN_STREAMING=1 with a
// RESPONSE_STREAM URL, and deploy/lambdaenv reads it).
//
// Lambda limits buffered responses to 6 MB. Streamed responses have a
// larger (soft) limit, and their bandwidth is capped after the first 6 MB.
//
// # Errors
//
// An event that cannot be turned into a request (not JSON, of no known
// shape, without a method, with a body that is not valid base64) is answered
// with 400 Bad Request; the handler does not run. When the function runs
// under [Start], a payload that is not JSON at all is rejected by
// aws-lambda-go before [Wrap] sees it, and the invoking service reports a
// function error.
//
// A panic in the handler is recovered and logged to [Options.Logger]. If no
// part of the response has left the function yet (always the case when
// buffered), the client receives 500 Internal Server Error. If a streamed
// response has already started, the stream is ended with an error, which
// Lambda reports as a function error: the client sees a truncated response.
// As in net/http, a panic with [http.ErrAbortHandler] is not logged.
//
// # Contexts
//
// The request's context is the invocation context: it carries the Lambda
// deadline and the [lambdacontext.LambdaContext], and it is cancelled when
// the invocation ends (when the handler returns, for streamed responses).
// [RequestFromContext] returns the event the request was built from.
//
// # Telemetry
//
// Lambda freezes a sandbox once the function asks the Runtime API for the
// next invocation, and may end it frozen: spans and metrics that an
// OpenTelemetry SDK batches in the background would leave late, or never.
// [Options.Flush] lists what to flush at the end of every invocation (the
// SDK's *trace.TracerProvider and *metric.MeterProvider are [Flusher]s;
// the adapter links no OpenTelemetry). The flush runs after the response
// has been sent, a streamed one to its end, and before the next invocation
// is asked for, so the client does not wait for it; it is bounded by
// [Options.FlushTimeout] and the invocation's deadline. [ColdStart] tells
// the first invocation of a sandbox from the others, for logs and
// metrics.
//
// # Concurrency
//
// The function returned by [Wrap] is safe for concurrent use, as Lambda
// managed instances (AWS_LAMBDA_MAX_CONCURRENCY) require, provided the
// handler is. A streamed response runs the handler in one goroutine, which
// ends before the invocation does; the adapter starts no other goroutines.
//
// See https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html,
// https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html,
// https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-integrations-lambda.html,
// https://docs.aws.amazon.com/elasticloadbalancing/latest/application/lambda-functions.html and
// https://docs.aws.amazon.com/lambda/latest/dg/configuration-response-streaming.html.
//
// [core.Server]: https://pkg.go.dev/github.com/mcpfn/mcpfn/core#Server
// [lambdacontext.LambdaContext]: https://pkg.go.dev/github.com/aws/aws-lambda-go/lambdacontext#LambdaContext
package lambda
