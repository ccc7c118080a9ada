package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/mcpfn/mcpfn/core"
)

// HTTPError is an HTTP response that carries no JSON-RPC answer: a non-2xx
// status whose body is empty or not a JSON-RPC error (401 and 403 included,
// once authorization has given up).
type HTTPError struct {
	Method     string      // the MCP method of the request ("" for GET/DELETE)
	StatusCode int         // e.g. 404
	Header     http.Header // the response headers
	Body       []byte      // the start of the response body (at most 4 KiB)
}

// Error implements error.
func (e *HTTPError) Error() string {
	s := "mcp client: HTTP " + strconv.Itoa(e.StatusCode)
	if t := http.StatusText(e.StatusCode); t != "" {
		s += " " + t
	}
	if e.Method != "" {
		s += " (" + e.Method + ")"
	}
	return s
}

// RPCError is a JSON-RPC error response from the server. The three errors of
// the 2026-07-28 transport come as their own types, each of which unwraps to
// its *RPCError: *UnsupportedVersionError (-32022), *HeaderMismatchError
// (-32020) and *MissingCapabilityError (-32021).
type RPCError struct {
	Method  string          // the request's method
	Code    int             // the JSON-RPC error code
	Message string          // error.message
	Data    json.RawMessage // error.data, raw (nil when absent)
	// StatusCode is the HTTP status the error came with.
	StatusCode int
}

// Error implements error.
func (e *RPCError) Error() string {
	return fmt.Sprintf("mcp client: %s: JSON-RPC error %d: %s", e.Method, e.Code, e.Message)
}

// Is reports whether target is an *RPCError with the same code, so that
// errors.Is(err, &client.RPCError{Code: core.CodeInvalidParams}) works.
func (e *RPCError) Is(target error) bool {
	t, ok := target.(*RPCError)
	return ok && t.Code == e.Code && (t.Method == "" || t.Method == e.Method)
}

// UnsupportedVersionError is -32022: the server does not serve the protocol
// version the request named (2026-07-28 basic/versioning).
type UnsupportedVersionError struct {
	*RPCError
	Supported []string // data.supported
	Requested string   // data.requested
}

// Unwrap returns the underlying *RPCError.
func (e *UnsupportedVersionError) Unwrap() error { return e.RPCError }

// HeaderMismatchError is -32020: a mirrored HTTP header was missing, invalid
// or differed from the body (2026-07-28 basic/transports/streamable-http).
type HeaderMismatchError struct{ *RPCError }

// Unwrap returns the underlying *RPCError.
func (e *HeaderMismatchError) Unwrap() error { return e.RPCError }

// MissingCapabilityError is -32021: the request needs a client capability
// its _meta did not declare.
type MissingCapabilityError struct {
	*RPCError
	// Required is data.requiredCapabilities, raw.
	Required json.RawMessage
}

// Unwrap returns the underlying *RPCError.
func (e *MissingCapabilityError) Unwrap() error { return e.RPCError }

// newRPCError builds the typed error for a JSON-RPC error object.
func newRPCError(method string, status int, w *wireError) error {
	e := &RPCError{Method: method, Code: w.Code, Message: w.Message, Data: w.Data, StatusCode: status}
	switch w.Code {
	case core.CodeUnsupportedProtocolVersion:
		var d struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}
		_ = json.Unmarshal(w.Data, &d)
		return &UnsupportedVersionError{RPCError: e, Supported: d.Supported, Requested: d.Requested}
	case core.CodeHeaderMismatch:
		return &HeaderMismatchError{e}
	case core.CodeMissingRequiredClientCapability:
		var d struct {
			Required json.RawMessage `json:"requiredCapabilities"`
		}
		_ = json.Unmarshal(w.Data, &d)
		return &MissingCapabilityError{RPCError: e, Required: d.Required}
	}
	return e
}

// Sentinel errors, matched with errors.Is.
var (
	// ErrStreamBroken: the response stream ended before the response arrived.
	ErrStreamBroken = errors.New("mcp client: response stream ended before the response")
	// ErrProtocol: the server broke the protocol (an unknown resultType, an
	// input request of a kind the client did not declare, a malformed
	// message).
	ErrProtocol = errors.New("mcp client: protocol violation")
	// ErrMaxRounds: a request needed more input rounds than
	// Options.MaxRounds allows (see MaxRoundsError).
	ErrMaxRounds = errors.New("mcp client: too many input rounds")
	// ErrClosed: the connection was closed.
	ErrClosed = errors.New("mcp client: connection closed")
	// ErrUnauthorized: the server kept answering 401/403 after the token
	// source had its attempts.
	ErrUnauthorized = errors.New("mcp client: unauthorized")
	// ErrNoCommonVersion: the server speaks no protocol version this client
	// speaks.
	ErrNoCommonVersion = errors.New("mcp client: no protocol version in common with the server")
)

// protocolError wraps ErrProtocol with detail.
func protocolError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrProtocol}, args...)...)
}

// MaxRoundsError is returned when a request needed more input rounds than
// Options.MaxRounds allows: a 2026-07-28 request still input_required after
// Rounds retries, or a legacy call whose server asked for input (one
// elicitation/create, sampling/createMessage or roots/list request per
// round) once more after Rounds answers; that call is cancelled. It matches
// ErrMaxRounds.
type MaxRoundsError struct {
	Method string
	Rounds int
}

// Error implements error.
func (e *MaxRoundsError) Error() string {
	return fmt.Sprintf("mcp client: %s: the server still asks for input after %d rounds", e.Method, e.Rounds)
}

// Is matches ErrMaxRounds.
func (e *MaxRoundsError) Is(target error) bool { return target == ErrMaxRounds }
