// Package invokeapi serves the AWS Lambda Invoke API on loopback for tests:
// the real SDK client (service/lambda) is pointed at it, and each invocation
// it accepts is run by a function the test gives (a front door's pool of
// emulators or Runtime API sandboxes), as Lambda runs the function.
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
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

const (
	maxSyncPayload  = 6 << 20
	maxEventPayload = 1 << 20
	pathPrefix      = "/2015-03-31/functions/"
	pathSuffix      = "/invocations"
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
	function string
	invoke   func(ctx context.Context, payload []byte) ([]byte, error)

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

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu         sync.Mutex
	faults     []Fault         // answered to the next Invokes, in order
	gate       <-chan struct{} // Event deliveries wait on it, when set
	accepted   int             // Event invocations answered 202
	deliveries chan Delivery
}

// New returns a server for the function named function, whose invocations
// invoke runs (with a context that ends when Close is called). Every
// invocation run is also sent on Deliveries, which holds up to 64 of them
// unread (the rest are dropped).
func New(function string, invoke func(ctx context.Context, payload []byte) ([]byte, error)) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{function: function, invoke: invoke, ctx: ctx, cancel: cancel, deliveries: make(chan Delivery, 64)}
}

// Deliveries receives every invocation the server has run, once it has run.
func (s *Server) Deliveries() <-chan Delivery { return s.deliveries }

// Fail makes the next len(faults) Invokes fail with these faults, in order.
func (s *Server) Fail(faults ...Fault) {
	s.mu.Lock()
	s.faults = append(s.faults, faults...)
	s.mu.Unlock()
}

// Hold makes the Event invocations accepted from now on wait until gate is
// closed before they run (nil: run at once).
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

// Close cancels the invocations in progress and waits for them.
func (s *Server) Close() {
	s.cancel()
	s.wg.Wait()
}

func (s *Server) unexpected(format string, args ...any) {
	if s.Unexpected != nil {
		s.Unexpected("invokeapi: "+format, args...)
	}
}

// ServeHTTP implements the Invoke operation.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, pathPrefix)
	if ok {
		name, ok = strings.CutSuffix(name, pathSuffix)
	}
	if r.Method != http.MethodPost || !ok || name == "" || strings.Contains(name, "/") {
		s.unexpected("%s %s is not an Invoke request", r.Method, r.URL.Path)
		awsError(w, http.StatusNotFound, "UnknownOperationException", "unknown operation "+r.Method+" "+r.URL.Path)
		return
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
		s.unexpected("unsigned request")
		awsError(w, http.StatusForbidden, "MissingAuthenticationTokenException", "missing authentication token")
		return
	}
	// FunctionName: my-function, 123456789012:function:my-function or
	// arn:aws:lambda:us-west-2:123456789012:function:my-function, each
	// with an optional :qualifier.
	fn := name
	if i := strings.LastIndex(fn, ":function:"); i >= 0 {
		fn = fn[i+len(":function:"):]
	}
	fn, _, _ = strings.Cut(fn, ":")
	if fn != s.function {
		awsError(w, http.StatusNotFound, "ResourceNotFoundException", "Function not found: "+name)
		return
	}
	typ := r.Header.Get("X-Amz-Invocation-Type")
	limit := maxSyncPayload
	switch typ {
	case "", "RequestResponse":
	case "Event":
		limit = maxEventPayload
	case "DryRun":
	default:
		s.unexpected("X-Amz-Invocation-Type %q", typ)
		awsError(w, http.StatusBadRequest, "InvalidParameterValueException", "invalid invocation type "+typ)
		return
	}
	payload, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err != nil {
		awsError(w, http.StatusBadRequest, "InvalidRequestContentException", err.Error())
		return
	}
	if len(payload) > limit {
		awsError(w, http.StatusRequestEntityTooLarge, "RequestTooLargeException", "Request must be smaller than "+fmt.Sprint(limit)+" bytes for the Invoke operation")
		return
	}
	if len(payload) > 0 && !json.Valid(payload) {
		awsError(w, http.StatusBadRequest, "InvalidRequestContentException", "Could not parse request body into json")
		return
	}
	s.mu.Lock()
	var fault *Fault
	if len(s.faults) > 0 {
		f := s.faults[0]
		s.faults = s.faults[1:]
		fault = &f
	}
	gate := s.gate
	if fault == nil && typ == "Event" {
		s.accepted++
	}
	s.mu.Unlock()
	if fault != nil {
		awsError(w, fault.Status, fault.Type, "injected fault")
		return
	}

	switch typ {
	case "DryRun":
		w.WriteHeader(http.StatusNoContent)
	case "Event":
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if gate != nil {
				select {
				case <-gate:
				case <-s.ctx.Done():
					return
				}
			}
			for attempt := 0; ; attempt++ {
				if d := s.run(true, payload); d.Err == nil || attempt == s.Retries {
					return
				}
				select {
				case <-time.After(s.RetryDelay):
				case <-s.ctx.Done():
					return
				}
			}
		}()
		w.WriteHeader(http.StatusAccepted)
	default:
		d := s.run(false, payload)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amz-Executed-Version", "$LATEST")
		if d.Err != nil {
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			b, _ := json.Marshal(map[string]string{"errorMessage": d.Err.Error(), "errorType": "Runtime.Error"})
			w.Write(b)
			return
		}
		w.Write(d.Response)
	}
}

// run runs one invocation and reports it on Deliveries.
func (s *Server) run(async bool, payload []byte) Delivery {
	res, err := s.invoke(s.ctx, payload)
	if err == nil && bytes.Contains(res, []byte(`"errorType"`)) && bytes.HasPrefix(bytes.TrimSpace(res), []byte(`{"errorMessage"`)) {
		err = errors.New(string(res)) // the runtime reported a function error
	}
	d := Delivery{Async: async, Payload: payload, Response: res, Err: err}
	select {
	case s.deliveries <- d:
	default:
	}
	return d
}

// awsError writes a REST JSON error as Lambda does.
func awsError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", typ)
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"__type": typ, "Type": "User", "message": msg})
	w.Write(b)
}
