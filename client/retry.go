package client

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Retries of requests the server refused for now. HTTP 429 (Too Many
// Requests, RFC 6585 §4) and 503 (Service Unavailable, RFC 9110 §15.6.4)
// say the server did not process the request, and either may carry
// Retry-After (RFC 9110 §10.2.3): how long to wait, as delta-seconds or as
// an HTTP-date. mcpfn servers answer so when a caller reaches one of their
// bounds (429 and -31429, core.LimitExceededError), when a legacy session
// is busy, when their session store is unavailable or auth's introspection
// is overloaded (503). Since nothing was processed, any request may be
// sent again, a POST of tools/call included: its body is bytes the client
// holds, and a 429 or 503 is a whole answer, never a stream that started.

// ErrRetryLater matches the error of a request the server refused for now
// (HTTP 429 or 503) once the client stopped sending it again: after
// Options.MaxRetries retries, or at once when the server asked for a wait
// longer than Options.MaxRetryWait or than the call's context leaves.
// errors.As gives the *RetryLaterError, which says when to try again.
var ErrRetryLater = errors.New("mcp client: the server asks to retry later")

// RetryLaterError is the error of a request the server refused for now
// (see ErrRetryLater, which it matches). It wraps the error of the last
// response, so errors.As also finds the *mcp.Error of a JSON-RPC error body
// (-31429 from an mcpfn server's bounds) or else the *HTTPError.
type RetryLaterError struct {
	// Method is the MCP method of the request ("" for GET and DELETE).
	Method string
	// StatusCode is the last response's status: 429 or 503.
	StatusCode int
	// RetryAfter is the wait the last response's Retry-After asked for,
	// from when it arrived; zero when it had none the client could read.
	RetryAfter time.Duration
	// At is when that wait ends (the response's arrival plus RetryAfter);
	// the zero Time when the response had no Retry-After.
	At time.Time
	// Attempts counts the times the request was sent.
	Attempts int
	// Err is the last response's error: an *mcp.Error or an *HTTPError.
	Err error

	// why says why the client did not wait ("" when the retries ran out).
	why string
}

// Error implements error: the last response's error, then when to retry.
func (e *RetryLaterError) Error() string {
	var b strings.Builder
	var he *HTTPError
	if !errors.As(e.Err, &he) {
		b.WriteString("mcp client: HTTP " + strconv.Itoa(e.StatusCode) + " " + http.StatusText(e.StatusCode) + ": ")
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	if e.Attempts > 1 {
		b.WriteString("; gave up after " + strconv.Itoa(e.Attempts) + " attempts")
	}
	if e.At.IsZero() {
		b.WriteString("; retry later")
	} else {
		b.WriteString("; the server asks to retry in " + e.RetryAfter.String() + " (at " + e.At.UTC().Format(time.RFC3339) + ")")
	}
	if e.why != "" {
		b.WriteString(", " + e.why)
	}
	return b.String()
}

// Unwrap returns the last response's error.
func (e *RetryLaterError) Unwrap() error { return e.Err }

// Is matches ErrRetryLater.
func (e *RetryLaterError) Is(target error) bool { return target == ErrRetryLater }

// retryBackoff is the wait before the first retry of a response without
// Retry-After; it doubles for each further retry, up to MaxRetryWait.
const retryBackoff = time.Second

// retryable reports whether status says the server refused the request
// for now without processing it.
func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// retryAfter reads the Retry-After of resp, received at now: the wait it
// asks for (never negative) and whether it has one the client can read.
// An HTTP-date is taken relative to the response's Date when it has one
// (RFC 9110 §6.6.1), so that a clock skew between the two hosts does not
// change the wait; delta-seconds too large for a Duration are the longest
// one.
func retryAfter(resp *http.Response, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if strings.Trim(v, "0123456789") == "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n > uint64(math.MaxInt64/int64(time.Second)) {
			return math.MaxInt64, true
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	ref := now
	if d, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
		ref = d
	}
	return max(t.Sub(ref), 0), true
}

// retryLater decides about a 429 or 503 response (its error err) to the
// attempt-th sending of a request: the wait before sending it again, or
// the *RetryLaterError to return.
func (c *Conn) retryLater(ctx context.Context, hr *httpReq, resp *http.Response, err error, attempt int) (time.Duration, error) {
	now := time.Now()
	ra, has := retryAfter(resp, now)
	e := &RetryLaterError{Method: hr.rpc, StatusCode: resp.StatusCode, Attempts: attempt, Err: err}
	if has {
		e.RetryAfter, e.At = ra, now.Add(ra)
	}
	retries := c.opts.MaxRetries
	if retries == 0 {
		retries = DefaultMaxRetries
	}
	if attempt > retries { // negative: none
		return 0, e
	}
	limit := c.opts.MaxRetryWait
	if limit == 0 {
		limit = DefaultMaxRetryWait
	}
	limit = max(limit, 0)
	wait := ra
	if !has {
		wait = min(retryBackoff<<min(attempt-1, 16), limit)
	}
	if wait > limit {
		e.why = "longer than the client waits (MaxRetryWait " + limit.String() + ")"
		return 0, e
	}
	if dl, ok := ctx.Deadline(); ok && now.Add(wait).After(dl) {
		e.why = "later than the call's deadline"
		return 0, e
	}
	return wait, nil
}

// sleep waits d, or until ctx ends (its error).
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
