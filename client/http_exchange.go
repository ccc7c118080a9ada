package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"
)

// exchange is the reading side of one request: it reads a JSON or SSE
// response until the response to id arrives, handing notifications to the
// Conn and server requests to srv. The protocol that sends the request
// builds the exchange: what it sets is all that differs between eras.
type exchange struct {
	c        *Conn
	id       int64
	method   string
	progress func(Progress)
	lastID   string // last SSE event id (resumption)
	retry    time.Duration
	// onNote, when set, takes the notifications of the stream.
	onNote func(*wireMessage) bool
	// srv answers the server's requests on the stream (a legacy session);
	// nil ignores them (2026-07-28 servers MUST NOT send any).
	srv serverRequests
	// maxInputs, when positive, bounds the server requests for input
	// (elicitation/create, sampling/createMessage, roots/list) the
	// exchange answers, across its resumptions: Options.MaxRounds, one
	// round per request. inputs counts them.
	maxInputs, inputs int
}

// serverRequests answers the requests a server sends on a stream.
type serverRequests interface {
	// answer answers m.
	answer(ctx context.Context, m *wireMessage)
	// refuse answers m with an error carrying msg.
	refuse(ctx context.Context, m *wireMessage, msg string)
}

// read returns the result of the response, an error response as *mcp.Error,
// or ErrStreamBroken if the stream ended first.
func (x *exchange) read(ctx context.Context, resp *http.Response) (json.RawMessage, error) {
	defer resp.Body.Close()
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		m, err := readJSONResponse(resp.Body, x.c.opts.MaxResponseBytes)
		if err != nil {
			return nil, err
		}
		return x.response(m, resp.StatusCode)
	case "text/event-stream":
		return x.readSSE(ctx, resp.Body, resp.StatusCode)
	}
	if resp.StatusCode == http.StatusAccepted {
		return nil, protocolError("202 Accepted for a request")
	}
	return nil, protocolError("response Content-Type %q", resp.Header.Get("Content-Type"))
}

func (x *exchange) response(m *wireMessage, status int) (json.RawMessage, error) {
	if !sameID(m.ID, x.id) {
		if m.ID == nil && m.Error != nil {
			return nil, rpcError(x.method, status, m.Error)
		}
		return nil, protocolError("response id %s, want %d", m.ID, x.id)
	}
	if m.Error != nil {
		return nil, rpcError(x.method, status, m.Error)
	}
	return m.Result, nil
}

func (x *exchange) readSSE(ctx context.Context, body io.Reader, status int) (json.RawMessage, error) {
	r := newSSEReader(body, x.c.opts.MaxResponseBytes)
	defer func() {
		// A resumed stream that sends no id keeps the last one known.
		if r.lastID != "" {
			x.lastID = r.lastID
		}
		if r.retry > 0 {
			x.retry = r.retry
		}
	}()
	for {
		m, err := nextStreamMessage(ctx, r)
		if r.lastID != "" {
			x.lastID = r.lastID
		}
		if err != nil {
			return nil, err
		}
		if m.isResponse() {
			if sameID(m.ID, x.id) {
				return x.response(m, status)
			}
			continue // not ours
		}
		if m.ID == nil {
			if x.onNote == nil || !x.onNote(m) {
				x.c.dispatch(m, x)
			}
			continue
		}
		if x.srv == nil {
			continue
		}
		if x.maxInputs > 0 && inputMethod(m.Method) {
			if x.inputs++; x.inputs > x.maxInputs {
				// One request too many: refuse it, and end the call
				// (the caller sends notifications/cancelled).
				x.srv.refuse(ctx, m, "input round limit reached")
				return nil, &MaxRoundsError{Method: x.method, Rounds: x.maxInputs}
			}
		}
		x.srv.answer(ctx, m)
	}
}

// inputMethod reports whether a server request asks for input, which
// counts as a round.
func inputMethod(m string) bool {
	return m == "elicitation/create" || m == "sampling/createMessage" || m == "roots/list"
}

// readJSONResponse reads the response sent as one application/json body
// of at most max bytes. A failed or oversized read is ErrStreamBroken (an
// ErrTimeout as it is), a message that is not a response a protocol
// error.
func readJSONResponse(body io.Reader, max int) (*wireMessage, error) {
	b, err := readLimited(body, max)
	if errors.Is(err, ErrTimeout) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStreamBroken, err)
	}
	m, err := decodeMessage(b)
	if err != nil {
		return nil, err
	}
	if !m.isResponse() {
		return nil, protocolError("JSON body is not a response")
	}
	return m, nil
}

func readLimited(r io.Reader, max int) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > max {
		return nil, errEventTooLarge
	}
	return b, nil
}

// nextStreamMessage reads the next JSON-RPC message of an SSE response,
// skipping events of other types. A failed read is the context's error
// when ctx has ended, an ErrTimeout as it is, or else ErrStreamBroken.
func nextStreamMessage(ctx context.Context, r *sseReader) (*wireMessage, error) {
	for {
		ev, err := r.next()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if errors.Is(err, ErrTimeout) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", ErrStreamBroken, err)
		}
		if ev.Event != "" && ev.Event != "message" {
			continue
		}
		return decodeMessage(ev.Data)
	}
}
