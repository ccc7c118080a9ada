package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// JSON-RPC and MCP error codes (JSON-RPC 2.0 §5.1; 2026-07-28 basic/index
// §Error Codes). -32020 to -32099 are reserved for codes the MCP
// specification defines.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeResourceNotFound is the legacy (2025-*) code for a missing
	// resource. The 2026-07-28 revision uses CodeInvalidParams instead.
	CodeResourceNotFound = -32002
	// CodeHeaderMismatch: a mirrored HTTP header is missing, invalid or
	// differs from the body (2026-07-28; HTTP 400).
	CodeHeaderMismatch = -32020
	// CodeMissingRequiredClientCapability: the request needs a client
	// capability its _meta does not declare; data.requiredCapabilities
	// names it (2026-07-28; HTTP 400).
	CodeMissingRequiredClientCapability = -32021
	// CodeUnsupportedProtocolVersion: the requested revision is not served;
	// data.supported lists those that are, data.requested repeats the one
	// asked for (2026-07-28 basic/versioning; HTTP 400).
	CodeUnsupportedProtocolVersion = -32022
	// CodeURLElicitationRequired is the 2025-11-25 error a tool returns when
	// the user must complete a URL elicitation first.
	CodeURLElicitationRequired = -32042
	// CodeLimitExceeded: the caller reached one of the server's bounds (its
	// tasks, its task bytes, its long-lived streams, the task workers) and
	// may try again later; data.reason names the bound, data.limit its
	// value and data.retryAfterMs when to try again. It is an application
	// code, outside -32768..-32000 as 2026-07-28 basic/index §Error Codes
	// asks of codes an implementation defines for its own purposes (the
	// specification defines none for this); mcpfn servers send it with HTTP
	// 429 and Retry-After. ErrLimitExceeded matches it.
	CodeLimitExceeded = -31429
)

// Error is the one protocol error type of both halves: a JSON-RPC error
// object (code, message, raw data) plus a cause that never leaves the
// process.
//
// A server returns it to answer with that error: build it with NewError
// (core adds constructors per class) and WithData; its Message is sent to
// the client, so it must not hold internal detail; put that in Cause,
// which is only logged. WithHTTP chooses the response's HTTP status and
// headers.
//
// A client receives it for every JSON-RPC error response, with the
// request's method and the response's HTTP status (Method,
// ResponseStatus). errors.Is matches it by code: against ErrHeaderMismatch,
// ErrMissingCapability and ErrUnsupportedVersion, or against another
// *Error with the same Code. Supported, Requested and RequiredCapabilities
// read the data of the 2026-07-28 transport errors.
//
// The JSON form (MarshalJSON, UnmarshalJSON) is the error object
// {"code", "message", "data"}. An *Error is not safe for concurrent
// modification; its With methods change and return the receiver, for use
// while building it.
type Error struct {
	Code    int
	Message string
	// Data is sent as error.data when non-nil: raw JSON, which WithData
	// builds from any value. A received error holds error.data as sent
	// (nil when absent).
	Data json.RawMessage
	// Cause is the underlying error, for logs and errors.Is/As. Never sent.
	Cause error

	// status, when non-zero, is the HTTP status of the response the server
	// sends e with (a missing _meta key is -32602 with 400, while a
	// handler's -32602 is a 200); header holds extra response headers.
	status int
	header http.Header
	// method and received record, on an error a client received, the
	// request's method and the response's HTTP status. Never sent: a server
	// that returns a received error answers with its code, message and data
	// under its own status.
	method   string
	received int
}

// NewError returns an *Error with the given code and message.
func NewError(code int, message string) *Error { return &Error{Code: code, Message: message} }

// WithData sets Data to v marshalled with encoding/json (nil for a nil v,
// or for a value that does not marshal), and returns e.
func (e *Error) WithData(v any) *Error {
	e.Data = nil
	if v != nil {
		if b, err := json.Marshal(v); err == nil {
			e.Data = b
		}
	}
	return e
}

// WithHTTP sets the HTTP status and extra response headers (e.g.
// WWW-Authenticate, Retry-After) of the response a server sends e with,
// and returns e. A zero status keeps the status the server derives from
// Code. In core they apply when e answers the request before anything else
// was written: returned by an Authenticator, or by a handler before its
// first notification (after it, e travels as a JSON-RPC error on the open
// stream and the server logs a warning).
func (e *Error) WithHTTP(status int, header http.Header) *Error {
	e.status = status
	e.header = header
	return e
}

// HTTPStatus returns the status set by WithHTTP, or 0.
func (e *Error) HTTPStatus() int { return e.status }

// HTTPHeader returns the response headers set by WithHTTP, or nil. Callers
// must not modify them.
func (e *Error) HTTPHeader() http.Header { return e.header }

// WithResponse records, on an error a client decoded from a response, the
// method of the request it answers and the HTTP status of the response,
// and returns e. They are never sent (see Method).
func (e *Error) WithResponse(method string, status int) *Error {
	e.method, e.received = method, status
	return e
}

// Method returns the method of the request a received error answers ("" for
// an error built by a server).
func (e *Error) Method() string { return e.method }

// ResponseStatus returns the HTTP status of the response a received error
// came with (200 for an error inside a successful response or an SSE
// stream; 0 for an error built by a server).
func (e *Error) ResponseStatus() int { return e.received }

// Error implements error: the code, the method of a received error, the
// message and the cause.
func (e *Error) Error() string {
	s := "mcp error " + strconv.Itoa(e.Code)
	if e.method != "" {
		s += " (" + e.method + ")"
	}
	s += ": " + e.Message
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// Is reports whether target is one of the code sentinels (ErrHeaderMismatch,
// ErrMissingCapability, ErrUnsupportedVersion, ErrLimitExceeded) for e's Code, or an *Error
// with e's Code (and, if the target has one, e's Method): so
// errors.Is(err, &mcp.Error{Code: mcp.CodeInvalidParams}) matches any
// -32602.
func (e *Error) Is(target error) bool {
	switch t := target.(type) {
	case codeSentinel:
		return e.Code == t.code
	case *Error:
		return t.Code == e.Code && (t.method == "" || t.method == e.method)
	}
	return false
}

// errorObject is the JSON form of an *Error.
type errorObject struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// MarshalJSON encodes e as a JSON-RPC error object.
func (e *Error) MarshalJSON() ([]byte, error) {
	return json.Marshal(errorObject{e.Code, e.Message, e.Data})
}

// UnmarshalJSON decodes a JSON-RPC error object into e (code, message and
// raw data; the rest of e is reset).
func (e *Error) UnmarshalJSON(b []byte) error {
	var w errorObject
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = Error{Code: w.Code, Message: w.Message, Data: w.Data}
	return nil
}

// Supported returns data.supported of a -32022 error: the protocol
// versions the server serves. It is nil when Data has none.
func (e *Error) Supported() []string {
	var d struct {
		Supported []string `json:"supported"`
	}
	if e.decodeData(&d) {
		return d.Supported
	}
	return nil
}

// Requested returns data.requested of a -32022 error: the version the
// request named, as the server read it, or "".
func (e *Error) Requested() string {
	var d struct {
		Requested string `json:"requested"`
	}
	e.decodeData(&d)
	return d.Requested
}

// RequiredCapabilities returns data.requiredCapabilities of a -32021 error:
// the client capabilities the request needs and did not declare. It is nil
// when Data has none.
func (e *Error) RequiredCapabilities() *ClientCapabilities {
	var d struct {
		Required *ClientCapabilities `json:"requiredCapabilities"`
	}
	if e.decodeData(&d) {
		return d.Required
	}
	return nil
}

// RetryAfter returns data.retryAfterMs of an error as a duration: when the
// server suggests trying again (CodeLimitExceeded). It is 0 when Data has
// none.
func (e *Error) RetryAfter() time.Duration {
	var d struct {
		RetryAfterMs int64 `json:"retryAfterMs"`
	}
	if e.decodeData(&d) && d.RetryAfterMs > 0 {
		return time.Duration(d.RetryAfterMs) * time.Millisecond
	}
	return 0
}

func (e *Error) decodeData(v any) bool {
	return len(e.Data) > 0 && json.Unmarshal(e.Data, v) == nil
}

// CodeOf returns the JSON-RPC code of err: the Code of an *Error in its
// chain, 0 for nil, and CodeInternalError for anything else.
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

// codeSentinel is an error matched by code (see Error.Is).
type codeSentinel struct {
	code int
	name string
}

func (s codeSentinel) Error() string { return fmt.Sprintf("mcp: %s (%d)", s.name, s.code) }

// Sentinels of the three 2026-07-28 transport errors, for errors.Is: each
// matches every *Error of its code, whatever its message.
var (
	// ErrHeaderMismatch matches -32020 (CodeHeaderMismatch).
	ErrHeaderMismatch error = codeSentinel{CodeHeaderMismatch, "header mismatch"}
	// ErrMissingCapability matches -32021
	// (CodeMissingRequiredClientCapability); see
	// Error.RequiredCapabilities.
	ErrMissingCapability error = codeSentinel{CodeMissingRequiredClientCapability, "missing required client capability"}
	// ErrUnsupportedVersion matches -32022 (CodeUnsupportedProtocolVersion);
	// see Error.Supported and Error.Requested.
	ErrUnsupportedVersion error = codeSentinel{CodeUnsupportedProtocolVersion, "unsupported protocol version"}
	// ErrLimitExceeded matches CodeLimitExceeded; see Error.RetryAfter.
	ErrLimitExceeded error = codeSentinel{CodeLimitExceeded, "limit exceeded"}
)
