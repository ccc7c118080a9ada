package core

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
	"github.com/mcpfn/mcpfn/mcp"
)

// JSON-RPC and MCP error codes (see the mcp constants of the same names).
const (
	CodeParseError     = mcp.CodeParseError
	CodeInvalidRequest = mcp.CodeInvalidRequest
	CodeMethodNotFound = mcp.CodeMethodNotFound
	CodeInvalidParams  = mcp.CodeInvalidParams
	CodeInternalError  = mcp.CodeInternalError
	// CodeResourceNotFound is the legacy (2025-*) code for a missing resource. The
	// 2026-07-28 revision uses CodeInvalidParams instead.
	CodeResourceNotFound = mcp.CodeResourceNotFound
	// CodeHeaderMismatch: a mirrored HTTP header is missing, invalid or differs
	// from the body (2026-07-28).
	CodeHeaderMismatch = mcp.CodeHeaderMismatch
	// CodeMissingRequiredClientCapability: the request needs a client
	// capability its _meta does not declare (2026-07-28).
	CodeMissingRequiredClientCapability = mcp.CodeMissingRequiredClientCapability
	// CodeUnsupportedProtocolVersion: the requested revision is not served
	// (2026-07-28).
	CodeUnsupportedProtocolVersion = mcp.CodeUnsupportedProtocolVersion
	// CodeURLElicitationRequired is the 2025-11-25 error a tool returns when the
	// user must complete a URL elicitation first.
	CodeURLElicitationRequired = mcp.CodeURLElicitationRequired
	// CodeLimitExceeded: the caller reached one of the server's bounds and
	// may retry later (LimitExceededError).
	CodeLimitExceeded = mcp.CodeLimitExceeded
)

// Error is the one protocol error type, mcp.Error: a JSON-RPC error object
// (code, message, raw data) plus an optional cause that never leaves the
// process. Its Message is sent to the client, so it must not hold internal
// detail; put that in Cause, which is only logged. Build it with NewError
// (and WithData, WithHTTP) or the constructors below.
type Error = mcp.Error

// NewError returns an *Error with the given code and message
// (mcp.NewError).
func NewError(code int, message string) *Error { return mcp.NewError(code, message) }

// InvalidParamsError returns a -32602 error with the given message. A handler
// returns it for arguments or parameters it cannot accept.
func InvalidParamsError(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// InternalError returns a -32603 (Internal error) whose message is sent to
// the client as is: the server could not do what was asked, through no
// fault of the request.
func InternalError(format string, args ...any) *Error {
	return &Error{Code: CodeInternalError, Message: fmt.Sprintf(format, args...)}
}

// MissingCapabilityError returns the -32021 error naming the client
// capabilities a request needs but did not declare
// (data.requiredCapabilities, which Error.RequiredCapabilities reads).
func MissingCapabilityError(required *ClientCapabilities) *Error {
	return NewError(CodeMissingRequiredClientCapability, "Missing required client capability").
		WithData(map[string]any{"requiredCapabilities": required})
}

// LimitExceededError returns the error of a request refused because its
// caller reached one of the server's bounds (its tasks, its task bytes,
// its long-lived streams, busy task workers): a condition the client
// caused or shares, which goes away by itself, so it is neither -32602
// (nothing is wrong with the params) nor -32603 (nothing is wrong with the
// server). The code is CodeLimitExceeded, data.reason is reason (a stable
// machine-readable name, e.g. "too_many_tasks"), data.limit the bound
// (when positive) and data.retryAfterMs the suggested wait; the response
// is HTTP 429 with Retry-After in whole seconds (RFC 9110 §10.2.3), at
// least 1. A middleware that limits rates can return it too.
func LimitExceededError(reason string, limit int64, retryAfter time.Duration, format string, args ...any) *Error {
	if retryAfter < time.Second {
		retryAfter = time.Second
	}
	data := map[string]any{"reason": reason, "retryAfterMs": retryAfter.Milliseconds()}
	if limit > 0 {
		data["limit"] = limit
	}
	secs := (retryAfter + time.Second - 1) / time.Second
	return NewError(CodeLimitExceeded, fmt.Sprintf(format, args...)).WithData(data).
		WithHTTP(http.StatusTooManyRequests, http.Header{"Retry-After": {strconv.FormatInt(int64(secs), 10)}})
}

// ResourceNotFoundError returns the error for a missing resource: -32602 with
// data.uri in 2026-07-28, translated to -32002 for legacy clients.
func ResourceNotFoundError(uri string) *Error {
	e := NewError(CodeInvalidParams, "Resource not found: "+Truncate(uri, LogURIBytes)).WithData(map[string]any{"uri": uri})
	e.Cause = errResourceNotFound
	return e
}

var errResourceNotFound = errors.New("resource not found")

// CodeOf returns the JSON-RPC code of err: the Code of an *Error in its chain,
// 0 for nil, and CodeInternalError for anything else (mcp.CodeOf).
func CodeOf(err error) int { return mcp.CodeOf(err) }

// Sentinel errors returned by stores and key providers, wrapped with %w.
var (
	// ErrSessionNotFound: the session does not exist, has expired or was deleted.
	ErrSessionNotFound = errors.New("mcp: session not found")
	// ErrSessionConflict: a conditional write lost against a concurrent writer.
	ErrSessionConflict = errors.New("mcp: session changed concurrently")
	// ErrKeyNotFound: no signing key has the requested id.
	ErrKeyNotFound = errors.New("mcp: signing key not found")
)

// invalidRequest returns the -32600 error for a malformed envelope.
func invalidRequest(msg string) *Error {
	return &Error{Code: CodeInvalidRequest, Message: "Invalid Request: " + msg}
}

// methodNotFound is the -32601 answer to a method the era does not serve.
func methodNotFound(method string) *Error {
	return &Error{Code: CodeMethodNotFound, Message: "Method not found: " + Truncate(method, LogNameBytes)}
}

// metaError is the -32602 / 400 answer to a malformed request _meta.
func metaError(msg string) *Error {
	return NewError(CodeInvalidParams, "Invalid params: "+msg).WithHTTP(http.StatusBadRequest, nil)
}

// headerMismatch is the -32020 / 400 answer to a mirrored header that is
// missing, invalid or differs from the body (2026-07-28).
func headerMismatch(format string) *Error {
	return NewError(CodeHeaderMismatch, "Header mismatch: "+format).WithHTTP(http.StatusBadRequest, nil)
}

// legacyError is an error with an explicit HTTP status.
func legacyError(status, code int, msg string) *Error {
	return NewError(code, msg).WithHTTP(status, nil)
}

// storeFailure is the answer when the session store fails: 503, so clients
// retry, with the detail logged rather than sent.
func storeFailure(err error) *Error {
	e := NewError(CodeInternalError, "Session store unavailable").WithHTTP(http.StatusServiceUnavailable, nil)
	e.Cause = err
	return e
}

// internalf is the -32603 error of a handler's invalid answer (an input
// request the server refuses to send), with a message for the client.
func internalf(format string, args ...any) *Error {
	return &Error{Code: CodeInternalError, Message: "Internal error: " + fmt.Sprintf(format, args...)}
}

// tooManyInputRounds is the error of a request that asked for input more
// than max times (ServerOptions.MaxInputRounds), in either era.
func tooManyInputRounds(max int) *Error {
	return NewError(CodeInternalError, fmt.Sprintf("This request asked for input more than %d times (the server's limit of input rounds)", max)).
		WithData(map[string]any{"reason": "too_many_input_rounds", "maxInputRounds": max})
}

// errInvalidState is the one answer to a state that fails verification.
func errInvalidState(cause error) *Error {
	e := NewError(CodeInvalidParams, "Invalid or expired requestState").WithData(map[string]any{"reason": "invalid_request_state"})
	e.Cause = cause
	return e
}

// notFound is the era's error for a missing resource.
func (s *Server) notFound(r *Request, uri string) error {
	e := ResourceNotFoundError(uri)
	e.Code = r.era.resourceNotFoundCode()
	return e
}

// toWireError turns any error into the error object sent to the client: its
// code, message and data, without the cause. Errors that are not *Error
// become a generic -32603 so that no internal text leaks.
func toWireError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return &Error{Code: e.Code, Message: e.Message, Data: e.Data}
	}
	return &Error{Code: CodeInternalError, Message: "Internal error"}
}

// httpStatusModern is the HTTP status of a modern (2026-07-28) error response.
// One switch, checked line by line against the transport spec's status table.
func httpStatusModern(code int) int {
	switch code {
	case CodeParseError, CodeInvalidRequest:
		return http.StatusBadRequest // 400 (recommended)
	case CodeMethodNotFound:
		return http.StatusNotFound // 404 MUST
	case CodeHeaderMismatch, CodeMissingRequiredClientCapability, CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest // 400 MUST
	default:
		return http.StatusOK // -32602 and -32603 from handlers travel in a 200
	}
}

// httpStatusLegacy is the HTTP status of a legacy (2025-*) error response.
func httpStatusLegacy(code int) int {
	switch code {
	case CodeParseError, CodeInvalidRequest:
		return http.StatusBadRequest
	default:
		return http.StatusOK
	}
}

// appendErrorResponse appends a JSON-RPC error response for e. The id is
// omitted when it could not be read (never "id": null, which the schema
// forbids).
func appendErrorResponse(b, id []byte, e *Error) []byte {
	var data any // nil, not a nil json.RawMessage: no data member
	if e.Data != nil {
		data = e.Data
	}
	return jsonwire.AppendError(b, id, e.Code, e.Message, data)
}

// errorHeaders makes the headers of e part of x's response, and warns when the
// status cannot apply any more because the stream has begun.
func (s *Server) errorHeaders(ctx context.Context, x *exchange, e *Error) {
	if e == nil || (e.HTTPHeader() == nil && e.HTTPStatus() < 400) {
		return
	}
	x.mu.Lock()
	started := x.started
	x.mu.Unlock()
	if started {
		s.log.WarnContext(ctx, "an error with an HTTP status came after the response stream began; sent as a JSON-RPC error",
			"code", e.Code, "status", e.HTTPStatus())
		return
	}
	eh := e.HTTPHeader()
	if eh == nil {
		return
	}
	prev := x.header
	x.header = func(h http.Header) {
		if prev != nil {
			prev(h)
		}
		copyHeader(h, eh)
	}
}

// copyHeader adds the values of src to dst, replacing what dst had.
func copyHeader(dst, src http.Header) {
	for k, v := range src {
		dst[k] = v
	}
}

// writeJSONError writes a complete JSON-RPC error response.
func writeJSONError(w http.ResponseWriter, status int, id []byte, e *Error) {
	b := appendErrorResponse(make([]byte, 0, 128), id, e)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// writeHTTPError answers a request refused before JSON-RPC dispatch with the
// error's status (default 500), headers and JSON-RPC error body.
func (s *Server) writeHTTPError(ctx context.Context, w http.ResponseWriter, err error) {
	var e *Error
	status := http.StatusInternalServerError
	if errors.As(err, &e) {
		if st := e.HTTPStatus(); st != 0 {
			status = st
		}
		copyHeader(w.Header(), e.HTTPHeader())
		if e.Cause != nil {
			s.log.DebugContext(ctx, "request refused", "status", status, "error", errText(e.Cause))
		}
	} else {
		s.log.ErrorContext(ctx, "authentication failed", "error", errText(err))
	}
	writeJSONError(w, status, nil, toWireError(err))
}
