package lambda

import (
	"bufio"
	"io"
	"net/http"
)

// streamBufferSize is the size of the buffer between the handler and the
// pipe, as in net/http: small writes are coalesced until the buffer fills or
// the handler flushes.
const streamBufferSize = 4096

// streamWriter writes a streamed response into a pipe. The status and
// headers are released (ready is closed) on the first Write or Flush, or when
// the handler returns; every Flush pushes the bytes written so far into the
// pipe, which hands them to the Lambda runtime client before returning.
//
// A streamWriter is used by the handler's goroutine only; the invoking
// goroutine reads status and sent after ready is closed, and they do not
// change after that.
type streamWriter struct {
	responseHeader
	released bool
	ready    chan struct{}
	pw       *io.PipeWriter
	bw       *bufio.Writer
}

var (
	_ http.ResponseWriter = (*streamWriter)(nil)
	_ http.Flusher        = (*streamWriter)(nil)
)

func newStreamWriter(pw *io.PipeWriter, head bool) *streamWriter {
	w := &streamWriter{
		ready: make(chan struct{}),
		pw:    pw,
		bw:    bufio.NewWriterSize(pw, streamBufferSize),
	}
	w.head = head
	return w
}

// release commits the status and headers and hands them to the invoking
// goroutine. p is the first part of the body, for content sniffing.
func (w *streamWriter) release(p []byte) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.released {
		return
	}
	w.sniff(p[:min(len(p), 512)])
	w.released = true
	close(w.ready)
}

func (w *streamWriter) Write(p []byte) (int, error) {
	if err := w.startBody(); err != nil {
		return 0, err
	}
	w.release(p)
	if w.head {
		return len(p), nil
	}
	return w.bw.Write(p)
}

// Flush implements [http.Flusher]: it sends the status and headers if they
// have not left yet, and every byte written so far.
func (w *streamWriter) Flush() {
	_ = w.FlushError()
}

// FlushError is Flush for [http.ResponseController]. It returns an error if
// the response can no longer be sent, for example because the invocation
// ended.
func (w *streamWriter) FlushError() error {
	w.release(nil)
	return w.bw.Flush()
}

// finish ends the response when the handler returns. If the handler failed
// (panicked) before anything was released, the client receives 500;
// otherwise the stream ends with an error, which Lambda reports as a
// function error.
func (w *streamWriter) finish(failed bool) {
	if failed {
		if w.released {
			w.pw.CloseWithError(errHandlerFailed)
			return
		}
		res := internalServerError()
		w.status, w.sent, w.wroteHeader = res.status, res.header, true
		w.release(nil)
		w.bw.Write(res.body)
	} else {
		w.release(nil)
	}
	if err := w.bw.Flush(); err != nil {
		w.pw.CloseWithError(err)
		return
	}
	w.pw.Close()
}

type streamError string

func (e streamError) Error() string { return string(e) }

// errHandlerFailed ends a stream whose handler panicked. Its text reaches the
// invoking service as the function error message.
const errHandlerFailed = streamError("lambda: handler failed while streaming the response")

// result returns the released status and headers.
func (w *streamWriter) result() result {
	return result{status: w.status, header: w.sent}
}
