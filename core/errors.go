package core

import (
	"context"
	"errors"
	"fmt"
	"net/http"

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

// ServerError returns a -32603 error whose message is sent to the client as is.
func ServerError(format string, args ...any) *Error {
	return &Error{Code: CodeInternalError, Message: fmt.Sprintf(format, args...)}
}

// MissingCapabilityError returns the -32021 error naming the client
// capabilities a request needs but did not declare
// (data.requiredCapabilities, which Error.RequiredCapabilities reads).
func MissingCapabilityError(required *ClientCapabilities) *Error {
	return NewError(CodeMissingRequiredClientCapability, "Missing required client capability").
		WithData(map[string]any{"requiredCapabilities": required})
}

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

// replyError answers with a JSON-RPC error, with the HTTP status of the
// exchange's era. Errors that are not *Error are logged and sent as a
// generic -32603.
func (s *Server) replyError(ctx context.Context, x *exchange, id []byte, err error) {
	var e *Error
	if !errors.As(err, &e) {
		s.log.ErrorContext(ctx, "request failed", "error", err.Error())
	} else if e.Cause != nil && e.HTTPStatus() >= 500 {
		// A server fault (the session store failed): say what happened.
		s.log.ErrorContext(ctx, "request failed", "code", e.Code, "status", e.HTTPStatus(), "error", e.Cause.Error())
	} else if e.Cause != nil {
		s.log.DebugContext(ctx, "request refused", "code", e.Code, "error", e.Cause.Error())
	}
	s.errorHeaders(ctx, x, e)
	we := toWireError(err)
	status := http.StatusOK
	if e != nil && e.HTTPStatus() != 0 {
		status = e.HTTPStatus()
	} else {
		status = x.era.errorStatus(we.Code)
	}
	x.finish(status, appendErrorResponse(make([]byte, 0, 128), id, we))
}

// methodNotFound is the -32601 answer to a method the era does not serve.
func methodNotFound(method string) *Error {
	return &Error{Code: CodeMethodNotFound, Message: "Method not found: " + method}
}
