package client

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/mcpfn/mcpfn/mcp"
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

// rpcError is the error of a JSON-RPC error response to a request of
// method that came with HTTP status: the *mcp.Error itself, which records
// both (mcp.Error.Method, mcp.Error.ResponseStatus).
func rpcError(method string, status int, e *mcp.Error) error {
	return e.WithResponse(method, status)
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
