package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// This file implements the legacy bridge for buffered platforms (SSE
// polling, 2025-11-25): a call whose handler asks for input sends the
// server-to-client requests as SSE events with ids, records the call in the
// session, and ends its response. The client answers each request with a
// POST (which may reach any instance: answers go through the session store)
// and reconnects with GET and Last-Event-ID; that request runs the handler
// again with the answers and sends the result, or the next round of
// requests.

// errParked means the response has ended after the server's requests.
var errParked = errors.New("mcp: response parked for SSE polling")

// parkedCall is a legacy call waiting for answers, kept in its session.
type parkedCall struct {
	Method string            `json:"m"`
	ID     json.RawMessage   `json:"id"`
	Params json.RawMessage   `json:"p"`
	Asked  map[string]string `json:"q"` // server request id -> input key
	State  string            `json:"s,omitempty"`
	Round  int               `json:"r"`
	Next   int               `json:"n"` // number of the next event of the stream
}

// pollState identifies the stream of a resumed call.
type pollState struct {
	stream string
	next   int
	round  int
}

// asked returns the rounds of input the call asked in earlier requests (0
// for a call that is not resumed).
func (p *pollState) asked() int {
	if p == nil {
		return 0
	}
	return p.round
}

// maxParked bounds the parked calls of one session.
const maxParked = 16

// pollRetryMillis is the reconnection delay sent to the client.
const pollRetryMillis = 500

func eventIDs(stream string, next int) func() string {
	return func() string {
		id := stream + "-" + strconv.Itoa(next)
		next++
		return id
	}
}

// bridgePark sends ir's requests as events and ends the response.
func (s *Server) bridgePark(ctx context.Context, r *Request, ir *InputRequiredError, params []byte) error {
	if r.Session == nil || r.x == nil || !r.x.canStream() || !legacyRevision(r.Session.d.Version).polls() {
		return ServerError("This request needs input from the client (%s): on a buffered platform that needs a 2025-11-25 session and an SSE response (SSE polling)", ir.Error())
	}
	if err := legacyCheck(ir, r.Session.d.Version, r.Session.ClientCapabilities()); err != nil {
		return err
	}
	ps := r.poll
	if ps == nil {
		ps = &pollState{stream: randomID("s"), next: 1}
	}
	keys := sortedKeys(ir.Requests)
	pc := &parkedCall{Method: r.Method, ID: r.ID, Params: params, Asked: map[string]string{}, State: ir.State,
		Round: ps.round + 1, Next: ps.next + len(keys)}
	msgs := make([][]byte, 0, len(keys))
	for _, k := range keys {
		id := randomID("mcpfn-")
		pc.Asked[id] = k
		p, err := json.Marshal(legacyParams(ir.Requests[k]))
		if err != nil {
			return err
		}
		msg := jsonwire.AppendString([]byte(`{"jsonrpc":"2.0","id":`), id)
		msg = jsonwire.AppendString(append(msg, `,"method":`...), ir.Requests[k].Method)
		msgs = append(msgs, append(append(append(msg, `,"params":`...), p...), '}'))
	}
	if err := r.Session.mutate(ctx, func(d *sessionData) error {
		if d.Parked == nil {
			d.Parked = map[string]*parkedCall{}
		}
		if _, ok := d.Parked[ps.stream]; !ok && len(d.Parked) >= maxParked {
			return ServerError("Too many calls of this session wait for the client's answers")
		}
		d.Parked[ps.stream] = pc
		return nil
	}); err != nil {
		var e *Error
		if errors.As(err, &e) {
			return e
		}
		return storeFailure(err)
	}
	x := r.x
	x.eventID = eventIDs(ps.stream, ps.next)
	for _, msg := range msgs {
		if err := x.send(ctx, msg); err != nil {
			return fmt.Errorf("sending the client's input requests: %w", err)
		}
	}
	x.endStream(pollRetryMillis)
	return errParked
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

// resumeParked serves a GET with Last-Event-ID for a parked call. It
// reports false when lastEventID names no parked call of the session.
func (s *Server) resumeParked(ctx context.Context, w http.ResponseWriter, hr *http.Request, sess *Session, version, lastEventID string) bool {
	i := strings.LastIndexByte(lastEventID, '-')
	if i <= 0 {
		return false
	}
	stream := lastEventID[:i]
	pc := sess.d.Parked[stream]
	if pc == nil {
		return false
	}
	x := newExchange(w, acceptance{sse: true}, eraLegacy)
	x.header = sessionHeader(sess.rec.ID)
	// Wait for every answer: they reach the session through the store.
	wait := 5 * time.Second
	if !isBuffered(ctx) {
		wait = s.opts.BridgeTimeout
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl)-time.Second < wait {
		wait = time.Until(dl) - time.Second
	}
	deadline := time.Now().Add(wait)
	for {
		complete := true
		for id := range pc.Asked {
			if _, ok := sess.d.Answers[id]; !ok {
				complete = false
				break
			}
		}
		if complete {
			break
		}
		if time.Now().After(deadline) {
			x.endStream(pollRetryMillis) // not yet: the client reconnects
			return true
		}
		select {
		case <-ctx.Done():
			return true
		case <-time.After(100 * time.Millisecond):
		}
		fresh, err := s.loadSession(ctx, sess.rec.ID, PrincipalFromContext(ctx))
		if err != nil {
			s.replyError(ctx, newExchange(w, acceptance{json: true}, eraLegacy), nil, storeFailure(err))
			return true
		}
		sess = fresh
		if pc = sess.d.Parked[stream]; pc == nil {
			x.endStream(pollRetryMillis) // another request resumed it
			return true
		}
	}
	// Claim the call and its answers with one conditional write: of two
	// concurrent resumptions, one wins.
	answers := map[string]json.RawMessage{}
	if err := sess.mutate(ctx, func(d *sessionData) error {
		cur := d.Parked[stream]
		if cur == nil || cur.Round != pc.Round {
			return errParked
		}
		delete(d.Parked, stream)
		for id := range pc.Asked {
			answers[id] = d.Answers[id]
			delete(d.Answers, id)
		}
		return nil
	}); err != nil {
		if errors.Is(err, errParked) {
			x.endStream(pollRetryMillis)
		} else {
			s.replyError(ctx, newExchange(w, acceptance{json: true}, eraLegacy), nil, storeFailure(err))
		}
		return true
	}
	x.eventID = eventIDs(stream, pc.Next)
	in := &InputResponses{raw: map[string]json.RawMessage{}, state: pc.State}
	var failed error
	for _, id := range askedInKeyOrder(pc.Asked) { // the first failing key is reported
		key := pc.Asked[id]
		var resp struct {
			Result json.RawMessage `json:"result"`
			Error  *Error          `json:"error"`
		}
		if err := json.Unmarshal(answers[id], &resp); err != nil {
			if failed == nil {
				failed = ServerError("The client's answer to %s is malformed", key)
			}
		} else if resp.Error != nil && failed == nil {
			failed = ServerError("The client answered %s with an error: %s", key, resp.Error.Message)
		}
		in.raw[key] = resp.Result
	}
	m := &rpcMessage{id: pc.ID, method: pc.Method, params: pc.Params}
	if m.params != nil {
		m.indexParams()
	}
	var res []byte
	err := failed
	var r *Request
	rctx := ctx
	if err == nil {
		rctx, r, err = s.legacyRequest(ctx, hr, x, m, sess, version)
	}
	if err == nil {
		r.Input, r.poll = in, &pollState{stream: stream, next: pc.Next, round: pc.Round}
		res, err = s.call(rctx, r, m.params)
	}
	s.reply(ctx, x, pc.ID, res, err)
	return true
}

// askedInKeyOrder returns the server request ids of asked (id -> input key)
// ordered by their keys.
func askedInKeyOrder(asked map[string]string) []string {
	ids := make([]string, 0, len(asked))
	for id := range asked {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return asked[ids[i]] < asked[ids[j]] })
	return ids
}
