package mcptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"

	wire "github.com/mcpfn/mcpfn/internal/mcptest"
)

// Recorder records the HTTP exchanges of a client: give it to Connect
// (Options.Record), or wrap any RoundTripper with Wrap. It keeps every
// byte of every exchange, so it is meant for tests. The zero value is
// ready to use; a Recorder is safe for concurrent use, and Exchanges may
// be called while exchanges are in flight.
type Recorder struct {
	mu sync.Mutex
	xs []*Exchange
}

// Exchange is one HTTP request and its response, as the client sent and
// received them.
type Exchange struct {
	// Method, URL and Header are the request's, as the client built it
	// (without the headers a transport adds, such as User-Agent).
	Method string
	URL    string
	Header http.Header
	// Body is the request body; nil when there is none.
	Body []byte
	// Status is the response's status code; 0 when the exchange failed
	// before the response's headers arrived.
	Status         int
	ResponseHeader http.Header
	// ResponseBody is the response body as the client read it: an SSE
	// stream's events so far, complete once the stream ended (or the
	// client closed it).
	ResponseBody []byte
}

// Wrap returns a RoundTripper that sends each request with rt (nil means
// http.DefaultTransport) and records it in r, with its response. The
// request body is recorded through Request.GetBody when the request has
// one (net/http sets it for bodies from bytes and strings readers), else
// as rt reads it.
func (r *Recorder) Wrap(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return &recording{r: r, rt: rt}
}

// Exchanges returns a copy of the exchanges recorded so far, in the order
// their requests were sent.
func (r *Recorder) Exchanges() []Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Exchange, len(r.xs))
	for i, x := range r.xs {
		out[i] = Exchange{
			Method: x.Method, URL: x.URL, Header: x.Header.Clone(), Body: bytes.Clone(x.Body),
			Status: x.Status, ResponseHeader: x.ResponseHeader.Clone(), ResponseBody: bytes.Clone(x.ResponseBody),
		}
	}
	return out
}

// ResponseMessages returns the JSON-RPC messages of the response body: the
// body when it is JSON, the data of each event when it is an SSE stream
// (events without data, such as a priming event, are left out). An
// exchange without a body has none.
func (x Exchange) ResponseMessages() ([]json.RawMessage, error) {
	ct, _, _ := mime.ParseMediaType(x.ResponseHeader.Get("Content-Type"))
	if ct != "text/event-stream" {
		b := bytes.TrimSpace(x.ResponseBody)
		if len(b) == 0 {
			return nil, nil
		}
		if !json.Valid(b) {
			return nil, fmt.Errorf("mcptest: the response body (%s) is not JSON", ct)
		}
		return []json.RawMessage{b}, nil
	}
	var out []json.RawMessage
	err := wire.ReadSSE(bytes.NewReader(x.ResponseBody), func(data []byte) error {
		if !json.Valid(data) {
			return fmt.Errorf("mcptest: an SSE event's data is not JSON: %q", data)
		}
		out = append(out, json.RawMessage(bytes.Clone(data)))
		return nil
	})
	return out, err
}

// recording is the RoundTripper of Recorder.Wrap.
type recording struct {
	r  *Recorder
	rt http.RoundTripper
}

func (rec *recording) RoundTrip(req *http.Request) (*http.Response, error) {
	r := rec.r
	x := &Exchange{Method: req.Method, URL: req.URL.String(), Header: req.Header.Clone()}
	if x.Method == "" {
		x.Method = http.MethodGet
	}
	if req.Body != nil && req.Body != http.NoBody {
		if req.GetBody != nil {
			if b, err := req.GetBody(); err == nil {
				x.Body, err = io.ReadAll(b)
				b.Close()
				if err != nil {
					x.Body = nil
				}
			}
		}
		if x.Body == nil {
			req = req.Clone(req.Context())
			req.Body = &teeBody{rc: req.Body, r: r, dst: &x.Body}
		}
	}
	r.mu.Lock()
	r.xs = append(r.xs, x)
	r.mu.Unlock()
	resp, err := rec.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	x.Status, x.ResponseHeader = resp.StatusCode, resp.Header.Clone()
	r.mu.Unlock()
	resp.Body = &teeBody{rc: resp.Body, r: r, dst: &x.ResponseBody}
	return resp, nil
}

// teeBody appends what is read from rc to *dst, under r.mu.
type teeBody struct {
	rc  io.ReadCloser
	r   *Recorder
	dst *[]byte
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.r.mu.Lock()
		*b.dst = append(*b.dst, p[:n]...)
		b.r.mu.Unlock()
	}
	return n, err
}

func (b *teeBody) Close() error { return b.rc.Close() }
