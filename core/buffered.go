package core

import "context"

type bufferedKey struct{}

// NewContextBuffered marks a request whose response the platform delivers
// only when the handler returns, such as an AWS Lambda function without
// response streaming. Platform adapters call it; the server then relies on no
// live stream: a subscriptions/listen request is acknowledged with an empty
// subscription and ends at once (and server/discover does not advertise
// list-change notifications), a legacy GET stream is refused with 405, and a
// legacy (2025-11-25) call that asks the client for input ends its response
// after sending the requests, to resume when the client reconnects with
// Last-Event-ID (SSE polling).
func NewContextBuffered(ctx context.Context) context.Context {
	return context.WithValue(ctx, bufferedKey{}, true)
}

// isBuffered reports whether ctx belongs to a buffered response.
func isBuffered(ctx context.Context) bool {
	b, _ := ctx.Value(bufferedKey{}).(bool)
	return b
}
