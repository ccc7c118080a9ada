package core

import (
	"errors"
	"fmt"
	"net/http"
)

// JSON-RPC and MCP error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeResourceNotFound is the legacy (2025-*) code for a missing resource. The
	// 2026-07-28 revision uses CodeInvalidParams instead.
	CodeResourceNotFound = -32002
	// CodeHeaderMismatch: a mirrored HTTP header is missing, invalid or differs
	// from the body (2026-07-28).
	CodeHeaderMismatch = -32020
	// CodeMissingRequiredClientCapability: the request needs a client
	// capability its _meta does not declare (2026-07-28).
	CodeMissingRequiredClientCapability = -32021
	// CodeUnsupportedProtocolVersion: the requested revision is not served
	// (2026-07-28).
	CodeUnsupportedProtocolVersion = -32022
	// CodeURLElicitationRequired is the 2025-11-25 error a tool returns when the
	// user must complete a URL elicitation first.
	CodeURLElicitationRequired = -32042
)

// Error is the one protocol error type: a JSON-RPC error object plus an optional
// cause that never leaves the process. Its Message is sent to the client, so it
// must not hold internal detail; put that in Cause, which is only logged.
type Error struct {
	Code    int
	Message string
	// Data is sent as error.data when non-nil. It is marshalled with encoding/json.
	Data any
	// Cause is the underlying error, for logs and errors.Is/As. Never sent.
	Cause error

	// status, when non-zero, overrides the HTTP status derived from Code (a
	// missing _meta key is -32602 with 400, while a handler's -32602 is a 200).
	status int
	// header holds extra HTTP response headers (see WithHTTP in authn.go).
	header http.Header
}

// Error implements error.
func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("mcp error %d: %s: %v", e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("mcp error %d: %s", e.Code, e.Message)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// NewError returns an *Error with the given code and message.
func NewError(code int, message string) *Error { return &Error{Code: code, Message: message} }

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
// capabilities a request needs but did not declare.
func MissingCapabilityError(required *ClientCapabilities) *Error {
	return &Error{
		Code:    CodeMissingRequiredClientCapability,
		Message: "Missing required client capability",
		Data:    map[string]any{"requiredCapabilities": required},
	}
}

// CodeOf returns the JSON-RPC code of err: the Code of an *Error in its chain,
// 0 for nil, and CodeInternalError for anything else.
func CodeOf(err error) int {
	if err == nil {
		return 0
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternalError
}

// Sentinel errors returned by stores and key providers, wrapped with %w.
var (
	// ErrSessionNotFound: the session does not exist, has expired or was deleted.
	ErrSessionNotFound = errors.New("mcp: session not found")
	// ErrSessionConflict: a conditional write lost against a concurrent writer.
	ErrSessionConflict = errors.New("mcp: session changed concurrently")
	// ErrKeyNotFound: no signing key has the requested id.
	ErrKeyNotFound = errors.New("mcp: signing key not found")
)

// wireError is the JSON form of a JSON-RPC error object.
type wireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// toWireError turns any error into the error object sent to the client. Errors
// that are not *Error become a generic -32603 so that no internal text leaks.
func toWireError(err error) *wireError {
	var e *Error
	if errors.As(err, &e) {
		return &wireError{Code: e.Code, Message: e.Message, Data: e.Data}
	}
	return &wireError{Code: CodeInternalError, Message: "Internal error"}
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
