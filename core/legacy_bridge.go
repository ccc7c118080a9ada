package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// DefaultBridgeTimeout bounds how long a legacy call waits for the client's
// answers to server-to-client requests when ServerOptions.BridgeTimeout is
// zero.
const DefaultBridgeTimeout = 2 * time.Minute

// bridgeNeeded is the error of a legacy method handler whose tool, prompt
// or resource asked for input (legacyEra.inputRequired): Server.serveRound
// catches it and hands it to the bridge.
type bridgeNeeded struct{ ir *InputRequiredError }

func (b *bridgeNeeded) Error() string { return b.ir.Error() }

// askBridge hands the input requests of a legacy call to the bridge.
func askBridge(ir *InputRequiredError) error { return &bridgeNeeded{ir} }

// bridge asks a legacy client for the input requests of ir, the call's
// round asked+1: as server-to-client requests on the call's SSE stream,
// waiting for the answers, or, on a buffered platform, by parking the call
// (SSE polling, errParked).
func (s *Server) bridge(ctx context.Context, r *Request, ir *InputRequiredError, params []byte, asked int) (*InputResponses, error) {
	if asked >= s.opts.MaxInputRounds {
		return nil, tooManyInputRounds(s.opts.MaxInputRounds)
	}
	if isBuffered(ctx) {
		return nil, s.bridgePark(ctx, r, ir, params)
	}
	return s.bridgeAsk(ctx, r, ir)
}

// legacyCheck validates what a legacy session may be asked: what was
// negotiated at initialize, never request _meta.
func legacyCheck(ir *InputRequiredError, version string, caps *ClientCapabilities) error {
	if err := checkInputRequired(ir, caps, false); err != nil {
		var e *Error
		if errors.As(err, &e) && e.Code == CodeMissingRequiredClientCapability {
			return InternalError("This request needs input the client did not declare at initialize (%s)", ir.Error())
		}
		return err
	}
	for _, k := range sortedKeys(ir.Requests) {
		req := ir.Requests[k]
		if req.Method == MethodElicit {
			if !legacyRevision(version).elicits() {
				return InternalError("This request needs elicitation, which protocol version %s does not have", version)
			}
			if p, ok := req.Params.(*ElicitURLParams); ok && p != nil && !legacyRevision(version).elicitsURL() {
				return InternalError("This request needs URL elicitation, which protocol version %s does not have", version)
			}
		}
	}
	return nil
}

func randomID(prefix string) string {
	b := make([]byte, 12)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// legacyParams adapts an input request's params to the legacy wire: form
// elicitations drop "mode" (absent before 2025-11-25) and URL elicitations
// get the elicitationId 2025-11-25 requires.
func legacyParams(ir *InputRequest) any {
	switch p := ir.Params.(type) {
	case *ElicitFormParams:
		return struct {
			Message         string          `json:"message"`
			RequestedSchema json.RawMessage `json:"requestedSchema"`
		}{p.Message, p.RequestedSchema}
	case *ElicitURLParams:
		c := *p
		if c.ElicitationID == "" {
			c.ElicitationID = randomID("el-")
		}
		return &c
	}
	return ir.Params
}

// bridgeAsk sends the input requests of ir to the client and waits for every
// answer.
func (s *Server) bridgeAsk(ctx context.Context, r *Request, ir *InputRequiredError) (*InputResponses, error) {
	if r.Session == nil || r.x == nil || !r.x.canStream() {
		return nil, InternalError("This request needs input from the client (%s), which needs a session and an SSE response stream", ir.Error())
	}
	if err := legacyCheck(ir, r.Session.d.Version, r.Session.ClientCapabilities()); err != nil {
		return nil, err
	}
	// The requests go out in the order of their keys, the order in which a
	// 2026-07-28 inputRequests object lists them.
	keys := sortedKeys(ir.Requests)
	reqIDs := make([]string, len(keys))       // key index -> server request id
	ids := make(map[string]string, len(keys)) // server request id -> key
	answerCh := make(chan idAnswer, len(keys))
	for i, k := range keys {
		reqIDs[i] = randomID("mcpfn-")
		ids[reqIDs[i]] = k
	}
	s.local.addWaiters(ids, answerCh)
	defer s.local.dropWaiters(ids)
	for i, k := range keys {
		id := reqIDs[i]
		p, err := json.Marshal(legacyParams(ir.Requests[k]))
		if err != nil {
			return nil, err
		}
		msg := []byte(`{"jsonrpc":"2.0","id":`)
		msg = jsonwire.AppendString(msg, id)
		msg = append(msg, `,"method":`...)
		msg = jsonwire.AppendString(msg, ir.Requests[k].Method)
		msg = append(append(append(msg, `,"params":`...), p...), '}')
		if err := r.x.send(ctx, msg); err != nil {
			return nil, fmt.Errorf("sending %s to the client: %w", ir.Requests[k].Method, err)
		}
	}
	answers := make(map[string]json.RawMessage, len(keys))
	timeout := time.NewTimer(s.opts.BridgeTimeout)
	defer timeout.Stop()
	var poll <-chan time.Time
	if s.opts.SessionStore != nil {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		poll = t.C
	}
	var fromStore []string
	var latest *SessionRecord
	var latestData sessionData
	for len(answers) < len(keys) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timeout.C:
			return nil, InternalError("Timed out waiting for the client's answer to %s", ir.Error())
		case a := <-answerCh:
			if _, ok := ids[a.id]; ok {
				answers[a.id] = a.ans
			}
		case <-poll:
			rec, err := s.store.Get(ctx, r.Session.rec.ID)
			if err != nil {
				return nil, storeFailure(err)
			}
			var d sessionData
			if json.Unmarshal(rec.Data, &d) == nil {
				for _, c := range d.Cancelled {
					if c == string(r.ID) {
						return nil, errCancelledByClient
					}
				}
				for id := range ids {
					if a, ok := d.Answers[id]; ok {
						if _, seen := answers[id]; !seen {
							answers[id] = a
						}
						fromStore = append(fromStore, id)
					}
				}
				latest, latestData = rec, d
			}
		}
	}
	if len(fromStore) > 0 {
		// Start from the record just read: the answers' writes changed it.
		r.Session.reset(latest, latestData)
		if err := r.Session.mutate(ctx, func(d *sessionData) error {
			for _, id := range fromStore {
				delete(d.Answers, id)
			}
			return nil
		}); err != nil {
			s.log.WarnContext(ctx, "removing delivered answers", "error", err.Error())
		}
	}
	in := &InputResponses{raw: make(map[string]json.RawMessage, len(keys)), state: ir.State}
	for _, id := range reqIDs { // in key order: the first failing key is reported
		a := answers[id]
		var resp struct {
			Result json.RawMessage `json:"result"`
			Error  *Error          `json:"error"`
		}
		if err := json.Unmarshal(a, &resp); err != nil {
			return nil, InternalError("The client's answer to %s is malformed", ids[id])
		}
		if resp.Error != nil {
			return nil, InternalError("The client answered %s with an error: %s", ir.Requests[ids[id]].Method, resp.Error.Message)
		}
		in.raw[ids[id]] = resp.Result
	}
	return in, nil
}

// deliverAnswer routes a client's response to a server-to-client request:
// to the waiter in this process, or through the session store to the
// instance that waits.
func (s *Server) deliverAnswer(ctx context.Context, sess *Session, m *rpcMessage) {
	id, ok := jsonwire.RawString(m.id)
	if !ok {
		return
	}
	var ans []byte
	if !m.isError {
		ans = append(append([]byte(`{"result":`), m.answer...), '}')
	} else {
		ans = append(append([]byte(`{"error":`), m.answer...), '}')
	}
	ch := s.local.waiter(id)
	if ch != nil {
		select {
		case ch <- idAnswer{id, ans}:
		default: // a duplicate answer; the first one counts
		}
		return
	}
	if sess == nil || !strings.HasPrefix(id, "mcpfn-") {
		return
	}
	if err := sess.mutate(ctx, func(d *sessionData) error {
		if d.Answers == nil {
			d.Answers = map[string]json.RawMessage{}
		}
		d.Answers[id] = ans
		return nil
	}); err != nil {
		s.log.WarnContext(ctx, "storing the client's answer", "error", err.Error())
	}
}

// The bridge on buffered platforms is SSE polling (2025-11-25
// basic/transports): a call whose handler asks for input sends the
// server-to-client requests as SSE events with ids, records the call in the
// session (parkedCall) and ends its response. The client answers each
// request with a POST (which may reach any instance: answers go through the
// session store) and reconnects with GET and Last-Event-ID; that request
// runs the handler again with the answers and sends the result, or the next
// round of requests (resumeParked).

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
		return InternalError("This request needs input from the client (%s): on a buffered platform that needs a 2025-11-25 session and an SSE response (SSE polling)", ir.Error())
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
			return InternalError("Too many calls of this session wait for the client's answers")
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
				failed = InternalError("The client's answer to %s is malformed", key)
			}
		} else if resp.Error != nil && failed == nil {
			failed = InternalError("The client answered %s with an error: %s", key, resp.Error.Message)
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

// bridgeRound ends a round whose legacy handler asked for input
// (legacyEra.inputRequired): the bridge asks the client, and the handler
// runs again with the answers in the next round, so that it never knows
// which era it served.
func (s *Server) bridgeRound(ctx context.Context, r *Request, bn *bridgeNeeded, params []byte, round int) (roundEnd, error) {
	in, err := s.bridge(ctx, r, bn.ir, params, round)
	switch {
	case errors.Is(err, errParked):
		return roundParked, nil
	case errors.Is(err, errCancelledByClient) || r.flight.cancelledByClient():
		return roundCancelled, nil
	case err != nil:
		return roundFailed, err
	}
	r.Input = in
	return roundAgain, nil
}
