// Package invokeapi serves the AWS Lambda Invoke API on loopback for tests:
// the real SDK client (service/lambda) is pointed at it, and each invocation
// it accepts is run by a function the test gives (a front door's pool of
// emulators or Runtime API sandboxes), as Lambda runs the function.
//
// A Server is lambdalocal.InvokeAPI, the Invoke API `mcpfn dev` serves,
// with what tests need around it: injected faults, a gate on Event
// invocations, a record of the invocations run, and a check that every
// request follows the wire protocol.
//
// # Wire protocol
//
// REST JSON (https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html):
//
//	POST /2015-03-31/functions/{FunctionName}/invocations[?Qualifier=Q]
//	X-Amz-Invocation-Type: RequestResponse (default) | Event | DryRun
//	body: the payload (at most 6 MB; 1 MB for Event)
//
// RequestResponse runs the invocation and answers 200 with its payload (and
// X-Amz-Function-Error: Unhandled when the function failed). Event answers
// 202 with an empty body at once and runs the invocation afterwards, in the
// background, as Lambda's asynchronous queue does (retrying it after a
// failure when Server.Retries says so); DryRun answers 204.
// FunctionName may be a name, a partial ARN or an ARN; one that is not the
// server's function is answered 404 ResourceNotFoundException. The request
// must be signed (the signature is not checked, its presence is). Errors are
// REST JSON errors: X-Amzn-ErrorType and {"__type":..., "message":...}.
package invokeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mcpfn/mcpfn/lambdalocal"
)

// Fault is an error the server answers an Invoke with instead of accepting
// it: an HTTP status and an AWS error type, such as 429
// TooManyRequestsException, 500 ServiceException or 403
// AccessDeniedException.
type Fault struct {
	Status int
	Type   string
}

// Delivery is one invocation the server ran: its payload and what the
// function answered.
type Delivery struct {
	// Async is set for Event invocations.
	Async bool
	// Payload is the event the function received.
	Payload []byte
	// Response is the function's answer; Err is set when the invocation
	// failed (a function error, a timeout, a dead process).
	Response []byte
	Err      error
}

// Server is an http.Handler speaking the Invoke API for one function. Build
// it with New. It is safe for concurrent use.
type Server struct {
	api    *lambdalocal.InvokeAPI
	invoke func(ctx context.Context, payload []byte) ([]byte, error)

	// Unexpected, when set, is called for every request that does not
	// follow the wire protocol (tests pass t.Errorf).
	Unexpected func(format string, args ...any)

	// Retries is how many times an Event invocation that fails (a
	// function error, a timeout, a dead process) is run again, each
	// RetryDelay after the failure, as Lambda retries asynchronous
	// invocations (twice by default, after about one and two minutes).
	// Zero: none. Set both before serving.
	Retries    int
	RetryDelay time.Duration
	retries    sync.Once // hands Retries and RetryDelay to api

	mu         sync.Mutex
	faults     []Fault         // answered to the next requests, in order
	gate       <-chan struct{} // Event invocations wait on it, when set
	accepted   int             // Event invocations answered 202
	deliveries chan Delivery
}

// New returns a server for the function named function, whose invocations
// invoke runs: a RequestResponse invocation with its request's context, an
// Event invocation with a context that ends when Close is called. Every
// invocation run is also sent on Deliveries, which holds up to 64 of them
// unread (the rest are dropped).
func New(function string, invoke func(ctx context.Context, payload []byte) ([]byte, error)) *Server {
	s := &Server{invoke: invoke, deliveries: make(chan Delivery, 64)}
	s.api = lambdalocal.NewInvokeAPI(function, invoker{s}, nil)
	return s
}

// Deliveries receives every invocation the server has run, once it has run.
func (s *Server) Deliveries() <-chan Delivery { return s.deliveries }

// Fail makes the next len(faults) requests fail with these faults, in
// order, unseen by the Invoke API.
func (s *Server) Fail(faults ...Fault) {
	s.mu.Lock()
	s.faults = append(s.faults, faults...)
	s.mu.Unlock()
}

// Hold makes Event invocations wait, each time they are about to run, until
// gate is closed (nil: run at once).
func (s *Server) Hold(gate <-chan struct{}) {
	s.mu.Lock()
	s.gate = gate
	s.mu.Unlock()
}

// Accepted returns the number of Event invocations answered 202.
func (s *Server) Accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// Close cancels the Event invocations in progress and waits for them;
// Event requests are refused afterwards.
func (s *Server) Close() { s.api.Close() }

func (s *Server) unexpected(format string, args ...any) {
	if s.Unexpected != nil {
		s.Unexpected("invokeapi: "+format, args...)
	}
}

// syncKey marks the context of a request, which a RequestResponse
// invocation runs with; an Event invocation runs with the Invoke API's own.
type syncKey struct{}

// ServeHTTP answers a request with the next injected fault, if any, or
// else with the Invoke API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.retries.Do(func() {
		s.api.RetryDelays = slices.Repeat([]time.Duration{s.RetryDelay}, s.Retries)
	})
	s.mu.Lock()
	var fault *Fault
	if len(s.faults) > 0 {
		f := s.faults[0]
		s.faults = s.faults[1:]
		fault = &f
	}
	s.mu.Unlock()
	if fault != nil {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-ErrorType", fault.Type)
		w.WriteHeader(fault.Status)
		b, _ := json.Marshal(map[string]string{"__type": fault.Type, "message": "injected fault"})
		w.Write(b)
		return
	}

	s.api.ServeHTTP(counter{w, s}, r.WithContext(context.WithValue(r.Context(), syncKey{}, true)))
	// The errors of a request that is not a well-formed Invoke.
	switch typ := w.Header().Get("X-Amzn-ErrorType"); typ {
	case "UnknownOperationException", "MissingAuthenticationTokenException", "InvalidParameterValueException":
		s.unexpected("%s %s (X-Amz-Invocation-Type %q): answered %s", r.Method, r.URL.Path, r.Header.Get("X-Amz-Invocation-Type"), typ)
	}
}

// counter counts the Event invocations the Invoke API accepts.
type counter struct {
	http.ResponseWriter
	s *Server
}

func (w counter) WriteHeader(status int) {
	if status == http.StatusAccepted {
		w.s.mu.Lock()
		w.s.accepted++
		w.s.mu.Unlock()
	}
	w.ResponseWriter.WriteHeader(status)
}

// invoker runs the Invoke API's invocations with Server.invoke, waiting on
// the gate first for an Event one, and reports each on Deliveries.
type invoker struct{ s *Server }

func (i invoker) Invoke(ctx context.Context, payload []byte) (*lambdalocal.Response, error) {
	s := i.s
	async := ctx.Value(syncKey{}) == nil
	if async {
		s.mu.Lock()
		gate := s.gate
		s.mu.Unlock()
		if gate != nil {
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	res, err := s.invoke(ctx, payload)
	fnErr := err == nil && bytes.Contains(res, []byte(`"errorType"`)) && bytes.HasPrefix(bytes.TrimSpace(res), []byte(`{"errorMessage"`))
	if fnErr {
		err = errors.New(string(res)) // the runtime reported a function error
	}
	select {
	case s.deliveries <- Delivery{Async: async, Payload: payload, Response: res, Err: err}:
	default:
	}
	if err != nil && !fnErr {
		return nil, err
	}
	return &lambdalocal.Response{Body: io.NopCloser(bytes.NewReader(res)), FunctionError: fnErr}, nil
}
