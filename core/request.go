package core

import (
	"context"
	"encoding/json"
	"net/http"
)

// Request holds what every handler may need besides its params: the request's
// protocol revision and client capabilities, its raw _meta and HTTP headers,
// the authenticated principal, the legacy session, and the answers of a
// multi round-trip request. It also sends progress and log notifications on
// the request's own response stream.
//
// A Request is valid only until its handler returns. Its methods are safe for
// concurrent use by goroutines the handler waits for.
type Request struct {
	// Method is the JSON-RPC method, e.g. "tools/call".
	Method string
	// ID is the raw JSON-RPC id.
	ID json.RawMessage
	// ProtocolVersion is the revision this request speaks.
	ProtocolVersion string
	// ClientCapabilities are the capabilities the client declared for this
	// request (2026-07-28) or at initialize (legacy). Never nil. It is the
	// request's own copy: changing it changes nothing the server decides.
	ClientCapabilities *ClientCapabilities
	// ClientInfo is the self-reported client, or nil.
	ClientInfo *Implementation
	// Meta is the raw params._meta object, or nil.
	Meta json.RawMessage
	// Header holds the HTTP request headers, or nil when not served over HTTP.
	Header http.Header
	// Principal is the authenticated caller, or nil for anonymous requests.
	Principal *Principal
	// Session is the legacy session of the request, or nil (always nil on
	// 2026-07-28 requests, which have no session).
	Session *Session
	// Input holds the answers to the input requests of the previous round of a
	// multi round-trip request. It is never nil; on a first round it is empty.
	Input *InputResponses

	// caps are the capabilities the server decides on, possibly shared
	// with other requests; handlers get a copy in ClientCapabilities.
	caps *ClientCapabilities

	srv           *Server
	hr            *http.Request // the HTTP request that carried it
	poll          *pollState    // a resumed legacy call (SSE polling)
	x             *exchange
	era           era         // what differs between 2026-07-28 and legacy requests
	spec          *methodSpec // the method in the era's table; nil: not served
	flight        *inflight   // a legacy request notifications/cancelled can cancel
	progressToken []byte
	// task is the run of the task the handler runs in (nil: a request);
	// taskPhase says whether StartTask defers the call to a task.
	task      *taskRun
	logLevel  int32 // rank of the requested level; -1: no log messages
	ownCaps   bool  // ClientCapabilities is this request's own copy
	taskPhase taskPhase
	// The outcome of the handler's round, noted by the encoders for the
	// middleware: a tools/call result with isError, a 2026-07-28
	// input_required result.
	isError, inputRes bool
	// targetFound is noted by tools/call once it has found the tool (in
	// advanced mode, by walking ListToolsHandler): Call.TargetFound.
	targetFound bool
}

// resultBuffer returns an empty buffer with room for n bytes to encode the
// result of r in. When r is answered on an exchange, the buffer's array
// begins with the head of r's JSON-RPC response, so that a result encoded
// within the room is sent where it is, not copied (exchange.enveloped).
func (r *Request) resultBuffer(n int) []byte {
	if r.x == nil {
		return make([]byte, 0, n)
	}
	size := responseHeadLen + len(r.ID) + n + 1
	var b []byte
	if r.srv != nil && r.srv.poolResults && size <= pooledResultCap {
		// Without a user's middleware nothing but the exchange keeps the
		// result, and the exchange is done with it once it is written
		// (an io.Writer retains nothing): Server.reply returns the buffer.
		p, _ := r.srv.results.Get().(*[]byte)
		if p == nil {
			p = new([]byte)
			*p = make([]byte, 0, pooledResultCap)
		}
		b, r.x.pooled = (*p)[:0], p
	} else {
		b, r.x.pooled = make([]byte, 0, size), nil
	}
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, r.ID...)
	b = append(b, `,"result":`...)
	r.x.head = b
	return b[len(b) : len(b) : cap(b)-1]
}

// pooledResultCap is the capacity of the pooled response buffers: a
// typical result fits, a larger one grows into its own array.
const pooledResultCap = 512

// cancelled reports whether the client cancelled the request
// (notifications/cancelled): it gets no response.
func (r *Request) cancelled() bool { return r.flight != nil && r.flight.cancelled.Load() }

// emptyCaps stands for "no capabilities declared". It is nil, not a shared
// value: a shared pointer would let one handler change what every server
// believes about every client. All ClientCapabilities methods accept nil.
var emptyCaps *ClientCapabilities

// Server returns the server handling the request.
func (r *Request) Server() *Server { return r.srv }

// RequireCapabilities returns nil when the client declared every capability in
// want for this request, and otherwise the -32021 error naming what is
// missing. A handler returns that error as is; it must do so before sending
// any notification for the answer to carry HTTP status 400.
func (r *Request) RequireCapabilities(want *ClientCapabilities) error {
	if want == nil {
		return nil
	}
	if m := missingCaps(r.declaredCaps(), want); m != nil {
		return MissingCapabilityError(m)
	}
	return nil
}

// declaredCaps returns the capabilities the server decides on: what the
// client declared, whatever the handler did to its copy.
func (r *Request) declaredCaps() *ClientCapabilities {
	if r.ownCaps {
		return r.caps
	}
	return r.ClientCapabilities
}

// NotifyProgress sends notifications/progress for this request if the client
// asked for progress (params._meta.progressToken); otherwise it does nothing.
// Inside a task (Request.TaskID not empty) a non-empty message becomes the
// task's statusMessage instead (tasks.md: notifications/progress is not
// sent for tasks).
// total and message are optional (zero values are omitted). Progress must
// increase with every call.
func (r *Request) NotifyProgress(ctx context.Context, progress, total float64, message string) error {
	if r.task != nil {
		if message != "" {
			r.task.setStatus(message)
		}
		return nil
	}
	if r.progressToken == nil || r.x == nil {
		return nil
	}
	p := struct {
		ProgressToken json.RawMessage `json:"progressToken"`
		Progress      float64         `json:"progress"`
		Total         float64         `json:"total,omitempty"`
		Message       string          `json:"message,omitempty"`
	}{r.progressToken, progress, total, message}
	return r.x.notify(ctx, "notifications/progress", p)
}

// Log sends notifications/message for this request when the client asked for
// log messages at level or below (2026-07-28: params._meta logLevel; legacy:
// logging/setLevel). Otherwise, and when level is unknown, it does nothing.
// data must not contain secrets or personal data. Logging is deprecated in
// 2026-07-28 (SEP-2577) and still served; for the server's own diagnostics
// use ServerOptions.Logger.
func (r *Request) Log(ctx context.Context, level LoggingLevel, logger string, data any) error {
	rank := levelRank(level)
	if r.x == nil || r.logLevel < 0 || int32(rank) < r.logLevel {
		return nil
	}
	p := struct {
		Level  LoggingLevel `json:"level"`
		Logger string       `json:"logger,omitempty"`
		Data   any          `json:"data"`
	}{level, logger, data}
	return r.x.notify(ctx, "notifications/message", p)
}

// CallToolParams are the params of tools/call.
type CallToolParams struct {
	Name string `json:"name"`
	// Arguments is the raw arguments object ({} when the client sent none).
	Arguments json.RawMessage `json:"arguments,omitempty"`

	// The client's raw inputResponses and requestState stay private: they
	// may hold answers to questions this server never asked. Handlers read
	// Request.Input, which keeps only the answers to the keys the sealed
	// state names, and the verified state.
	inputResponses map[string]json.RawMessage
	requestState   string
}

// CallToolRequest is a tools/call request.
type CallToolRequest struct {
	*Request
	Params CallToolParams
}

// ListToolsRequest is a tools/list request.
type ListToolsRequest struct {
	*Request
	// Cursor is the opaque cursor of the page asked for; "" for the first page.
	Cursor string
	// HasCursor reports whether a cursor was sent (an empty string is a valid
	// cursor).
	HasCursor bool
}

// ReadResourceRequest is a resources/read request.
type ReadResourceRequest struct {
	*Request
	URI string
	// Vars holds the variables of the URI template that matched, for template
	// resources: percent-decoded, an exploded list's items joined with commas,
	// a variable the URI leaves out absent (Server.AddResourceTemplate).
	Vars map[string]string
	// The raw multi round-trip fields stay private (see CallToolParams);
	// handlers read Request.Input.
	inputResponses map[string]json.RawMessage
	requestState   string
}

// GetPromptRequest is a prompts/get request.
type GetPromptRequest struct {
	*Request
	Name      string
	Arguments map[string]string
	// The raw multi round-trip fields stay private (see CallToolParams);
	// handlers read Request.Input.
	inputResponses map[string]json.RawMessage
	requestState   string
}

// CompleteRequest is a completion/complete request.
type CompleteRequest struct {
	*Request
	Params CompleteParams
}
