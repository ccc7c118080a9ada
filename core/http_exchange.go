package core

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// exchange is the response side of one HTTP request: a single JSON response,
// or an SSE stream carrying notifications (and legacy server-to-client
// requests) before the response. Status codes other than 200 can only be
// chosen while nothing has been written.
type exchange struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	era     era // the protocol of the request: its error statuses
	acc     acceptance
	wantSSE bool // the answer is an SSE stream even without notifications

	mu      sync.Mutex
	started bool // SSE headers written
	done    bool // final response written
	buf     []byte
	// sessionID, when set, is sent as Mcp-Session-Id (legacy sessions).
	sessionID string
	// header is applied to the response headers before they are written,
	// after sessionID.
	header func(http.Header)
	// eventID, when set, numbers SSE events (legacy 2025-11-25 streams).
	eventID func() string

	// The values of the Mcp-Session-Id and Content-Type headers: the
	// exchange's own, so that writing them allocates nothing.
	sessionHeader, typeHeader [1]string
	// head is the head of the JSON-RPC response written by
	// Request.resultBuffer, with room after it for the result.
	head []byte
	// pooled is the pooled buffer head was taken from, if it was.
	pooled *[]byte
	// batch, when set, collects the response instead of writing it: the
	// exchange is one request of a legacy batch (2025-03-26).
	batch *[][]byte
}

func newExchange(w http.ResponseWriter, acc acceptance, e era) *exchange {
	return &exchange{w: w, acc: acc, era: e}
}

// setHeaders applies sessionID and header to the response headers h.
func (x *exchange) setHeaders(h http.Header) {
	if x.sessionID != "" {
		x.sessionHeader[0] = x.sessionID
		h[canonSessionID] = x.sessionHeader[:]
	}
	if x.header != nil {
		x.header(h)
	}
}

// responseHeadLen is the length of the JSON-RPC response head
// {"jsonrpc":"2.0","id":<id>,"result": without the id.
const responseHeadLen = len(`{"jsonrpc":"2.0","id":,"result":`)

// enveloped returns the JSON-RPC response of the result res of the
// request id when res was encoded in the buffer Request.resultBuffer
// returned: then the response is the head, res where it already is, and
// the closing brace, and nothing is copied. res must be the encoder's
// clipped result (cap equal to len): the brace then goes where no slice
// of res reaches, so a caller holding a longer slice of the same buffer
// (a middleware that returned a prefix of the result) sees nothing change.
func (x *exchange) enveloped(id, res []byte) ([]byte, bool) {
	h := x.head
	x.head = nil
	if len(h) != responseHeadLen+len(id) || len(res) == 0 || cap(res) != len(res) || cap(h)-len(h) < len(res)+1 {
		return nil, false
	}
	msg := h[:len(h)+len(res)+1]
	if &msg[len(h)] != &res[0] || !bytes.Equal(h[len(h)-len(`,"result":`)-len(id):len(h)-len(`,"result":`)], id) {
		return nil, false
	}
	msg[len(msg)-1] = '}'
	return msg, true
}

// release returns the pooled buffer of the response to srv, once the
// response is written and nothing else holds it.
func (x *exchange) release(srv *Server) {
	if p := x.pooled; p != nil {
		x.pooled = nil
		srv.results.Put(p)
	}
}

// flush pushes what was written to the client. Callers hold x.mu.
func (x *exchange) flush() error {
	if x.rc == nil {
		x.rc = http.NewResponseController(x.w)
	}
	return x.rc.Flush()
}

var errStreamClosed = errors.New("mcp: response stream closed")

// startSSE writes the SSE response headers. Callers hold x.mu.
func (x *exchange) startSSE() {
	if x.started {
		return
	}
	h := x.w.Header()
	x.setHeaders(h)
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	x.w.WriteHeader(http.StatusOK)
	x.started = true
}

// writeEvent writes one SSE event holding msg and flushes. Callers hold x.mu.
func (x *exchange) writeEvent(msg []byte) error {
	b := x.buf[:0]
	if x.eventID != nil {
		b = append(b, "id: "...)
		b = append(b, x.eventID()...)
		b = append(b, '\n')
	}
	b = append(b, "data: "...)
	b = append(b, msg...)
	b = append(b, '\n', '\n')
	x.buf = b
	if _, err := x.w.Write(b); err != nil {
		return err
	}
	return x.flush()
}

// canStream reports whether notifications can be sent on this response.
func (x *exchange) canStream() bool { return x.acc.sse }

// notify sends a notification on the SSE stream, starting it if needed. It is
// dropped when the client does not accept SSE.
func (x *exchange) notify(ctx context.Context, method string, params any) error {
	if !x.acc.sse {
		return nil
	}
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return x.send(ctx, jsonwire.AppendNotification(nil, method, p))
}

// open starts the SSE stream and flushes its headers.
func (x *exchange) open() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.startSSE()
	x.flush()
}

// send writes one message on the SSE stream.
func (x *exchange) send(ctx context.Context, msg []byte) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done {
		return errStreamClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	x.startSSE()
	return x.writeEvent(msg)
}

// comment writes an SSE comment line (keep-alive) if the stream is open.
func (x *exchange) comment() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done || !x.started {
		return nil
	}
	if _, err := io.WriteString(x.w, ": keep-alive\n\n"); err != nil {
		return err
	}
	return x.flush()
}

// finish writes the final response: as the last SSE event when a stream is
// open (or wanted and the status is 200), else as JSON with status.
func (x *exchange) finish(status int, msg []byte) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done {
		return
	}
	x.done = true
	if x.batch != nil {
		*x.batch = append(*x.batch, append([]byte(nil), msg...))
		return
	}
	if x.started || (status == http.StatusOK && x.acc.sse && (x.wantSSE || !x.acc.json)) {
		x.startSSE()
		x.writeEvent(msg)
		return
	}
	h := x.w.Header()
	x.setHeaders(h)
	x.typeHeader[0] = "application/json"
	h["Content-Type"] = x.typeHeader[:]
	x.w.WriteHeader(status)
	x.w.Write(msg)
}

// noResponse ends the exchange without a JSON-RPC response (a cancelled
// legacy request): an SSE stream that ends, or 204.
func (x *exchange) noResponse() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done {
		return
	}
	x.done = true
	if x.started || x.batch != nil {
		return
	}
	x.setHeaders(x.w.Header())
	x.w.WriteHeader(http.StatusNoContent)
}

// accepted answers a notification or response with 202 and no body.
func (x *exchange) accepted() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.done = true
	x.setHeaders(x.w.Header())
	x.w.WriteHeader(http.StatusAccepted)
}

// keepAlive writes comment lines every d until ctx ends. It returns when ctx
// is done, so it never outlives the request.
func keepAlive(ctx context.Context, x *exchange, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if x.comment() != nil {
				return
			}
		}
	}
}

// endStream ends an SSE response without a final message, telling the client
// when to reconnect.
func (x *exchange) endStream(retryMillis int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done {
		return
	}
	x.done = true
	x.startSSE()
	io.WriteString(x.w, "retry: "+strconv.Itoa(retryMillis)+"\n\n")
	x.flush()
}

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
