package lambdalocal

import (
	"bytes"
	"io"
	"sync"
)

// maxLine bounds a line of the function's output kept while waiting for
// its end: a longer one is written in pieces, each prefixed.
const maxLine = 64 << 10

// lineWriter writes whole lines to w, each with a prefix, so that the
// output of several processes interleaves line by line.
type lineWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			if len(w.buf) >= maxLine {
				w.emit(append(w.buf[:maxLine:maxLine], '\n'))
				w.buf = append(w.buf[:0], w.buf[maxLine:]...)
				continue
			}
			break
		}
		w.emit(w.buf[:i+1])
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

func (w *lineWriter) emit(line []byte) {
	b := make([]byte, 0, len(w.prefix)+len(line))
	b = append(append(b, w.prefix...), line...)
	w.w.Write(b)
}

// Flush writes a last, unterminated line.
func (w *lineWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit(append(w.buf, '\n'))
		w.buf = nil
	}
}
