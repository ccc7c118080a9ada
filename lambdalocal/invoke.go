package lambdalocal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The Invoke API's limits and path.
const (
	maxEventPayload = 1 << 20 // an asynchronous invocation's payload (Lambda's quota: 1 MB)
	invokePrefix    = "/2015-03-31/functions/"
	invokeSuffix    = "/invocations"
)

// DefaultRetryDelays are the delays before Lambda's two retries of an
// asynchronous invocation that failed: about one minute, then two.
var DefaultRetryDelays = []time.Duration{time.Minute, 2 * time.Minute}

// InvokeAPI is an http.Handler serving the Lambda Invoke API
// (https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html) for one
// function, so that code calling lambda:InvokeFunction with the AWS SDK
// (AWS_ENDPOINT_URL_LAMBDA pointing here) reaches the local function:
//
//	POST /2015-03-31/functions/{FunctionName}/invocations[?Qualifier=Q]
//	X-Amz-Invocation-Type: RequestResponse (default) | Event | DryRun
//
// RequestResponse runs the invocation and answers 200 with its payload
// (with X-Amz-Function-Error: Unhandled when the function failed). Event
// answers 202 at once and runs the invocation afterwards, as Lambda's
// asynchronous queue does, retrying one that fails after each of
// RetryDelays. DryRun answers 204. FunctionName may be a name, a partial
// ARN or an ARN; another function's is answered 404
// ResourceNotFoundException. The request must be signed (the signature is
// not checked, its presence is). Errors are REST JSON errors.
//
// Build one with NewInvokeAPI. It is safe for concurrent use; Close ends
// the asynchronous invocations in progress.
type InvokeAPI struct {
	name string
	fn   Invoker
	log  *slog.Logger

	// RetryDelays are the delays before each retry of an asynchronous
	// invocation that failed; NewInvokeAPI sets DefaultRetryDelays. Set
	// before serving.
	RetryDelays []time.Duration

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewInvokeAPI returns the Invoke API of the function named name, whose
// invocations fn runs. logger receives a line per asynchronous invocation
// that failed; nil discards them.
func NewInvokeAPI(name string, fn Invoker, logger *slog.Logger) *InvokeAPI {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &InvokeAPI{name: name, fn: fn, log: logger, RetryDelays: DefaultRetryDelays, ctx: ctx, cancel: cancel}
}

// Close cancels the asynchronous invocations in progress and waits for
// them; Event requests are refused afterwards.
func (a *InvokeAPI) Close() {
	a.cancel()
	a.wg.Wait()
}

// ServeHTTP implements the Invoke operation.
func (a *InvokeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, invokePrefix)
	if ok {
		name, ok = strings.CutSuffix(name, invokeSuffix)
	}
	if r.Method != http.MethodPost || !ok || name == "" || strings.Contains(name, "/") {
		awsError(w, http.StatusNotFound, "UnknownOperationException", "unknown operation "+r.Method+" "+r.URL.Path)
		return
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
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
	if fn != a.name {
		awsError(w, http.StatusNotFound, "ResourceNotFoundException", "Function not found: "+name)
		return
	}
	typ := r.Header.Get("X-Amz-Invocation-Type")
	limit := maxPayload
	switch typ {
	case "", "RequestResponse", "DryRun":
	case "Event":
		limit = maxEventPayload
	default:
		awsError(w, http.StatusBadRequest, "InvalidParameterValueException", "invalid invocation type "+typ)
		return
	}
	payload, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err != nil {
		awsError(w, http.StatusBadRequest, "InvalidRequestContentException", err.Error())
		return
	}
	if len(payload) > limit {
		awsError(w, http.StatusRequestEntityTooLarge, "RequestTooLargeException", fmt.Sprintf("Request must be smaller than %d bytes for the Invoke operation", limit))
		return
	}
	if len(payload) > 0 && !json.Valid(payload) {
		awsError(w, http.StatusBadRequest, "InvalidRequestContentException", "Could not parse request body into json")
		return
	}
	switch typ {
	case "DryRun":
		w.WriteHeader(http.StatusNoContent)
	case "Event":
		if a.ctx.Err() != nil {
			awsError(w, http.StatusServiceUnavailable, "ServiceException", "the function is shutting down")
			return
		}
		a.wg.Go(func() { a.runAsync(payload) })
		w.WriteHeader(http.StatusAccepted)
	default:
		res, err := a.run(r.Context(), payload)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amz-Executed-Version", "$LATEST")
		if err != nil {
			var fe functionError
			if !errors.As(err, &fe) {
				fe = functionError{payload: mustJSON(map[string]string{"errorMessage": err.Error(), "errorType": "Runtime.Error"})}
			}
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			w.Write(fe.payload)
			return
		}
		w.Write(res)
	}
}

// runAsync runs an asynchronous invocation, and its retries.
func (a *InvokeAPI) runAsync(payload []byte) {
	for attempt := 0; ; attempt++ {
		_, err := a.run(a.ctx, payload)
		if err == nil || a.ctx.Err() != nil {
			return
		}
		if attempt == len(a.RetryDelays) {
			a.log.Warn("asynchronous invocation failed; no retry left", "function", a.name, "err", err)
			return
		}
		a.log.Warn("asynchronous invocation failed; retrying", "function", a.name, "err", err, "after", a.RetryDelays[attempt])
		select {
		case <-time.After(a.RetryDelays[attempt]):
		case <-a.ctx.Done():
			return
		}
	}
}

// functionError is the error payload of an invocation the function failed.
type functionError struct{ payload []byte }

func (e functionError) Error() string { return "function error: " + truncate(e.payload, 512) }

// run runs one invocation and returns its whole payload; a function error
// is a functionError.
func (a *InvokeAPI) run(ctx context.Context, payload []byte) ([]byte, error) {
	res, err := a.fn.Invoke(ctx, payload)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 4*maxPayload))
	if err != nil {
		return nil, err
	}
	var fnErr struct {
		ErrorMessage *string `json:"errorMessage"`
		ErrorType    string  `json:"errorType"`
		StatusCode   *int    `json:"statusCode"`
	}
	if res.FunctionError || res.ContentType != StreamingContentType && json.Unmarshal(b, &fnErr) == nil && fnErr.ErrorMessage != nil && fnErr.StatusCode == nil {
		return nil, functionError{payload: b}
	}
	return b, nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// awsError writes an AWS JSON error (REST JSON for Lambda, JSON 1.1 for
// Secrets Manager read the same fields).
func awsError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", typ)
	w.WriteHeader(status)
	w.Write(mustJSON(map[string]string{"__type": typ, "message": msg}))
}
