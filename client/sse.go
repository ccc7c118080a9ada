package client

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"time"
)

// sseEvent is one dispatched Server-Sent Event (WHATWG HTML §9.2 "Server-sent
// events", as used by 2026-07-28 basic/transports/streamable-http).
type sseEvent struct {
	ID    string // the last event ID after this event (empty: none)
	HasID bool   // whether this event carried an id field
	Event string // the event type; "" means "message"
	Data  []byte // the data lines joined by "\n"
}

// errEventTooLarge: one event exceeded the reader's bound.
var errEventTooLarge = errors.New("mcp client: SSE event too large")

// sseReader reads events from a stream. It holds at most max bytes of one
// event in memory.
type sseReader struct {
	r       *bufio.Reader
	max     int
	lastID  string
	retry   time.Duration // the last retry: value, 0 if none
	data    []byte
	hasData bool
	line    []byte
}

func newSSEReader(r io.Reader, max int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 4096), max: max}
}

// readLine returns the next line without its terminator (LF, CRLF or CR).
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			if err == io.EOF && len(s.line) > 0 {
				return s.line, nil
			}
			return nil, err
		}
		switch b {
		case '\n':
			return s.line, nil
		case '\r':
			if nb, err := s.r.Peek(1); err == nil && nb[0] == '\n' {
				s.r.ReadByte()
			}
			return s.line, nil
		}
		if len(s.line) >= s.max {
			return nil, errEventTooLarge
		}
		// Copy runs of plain bytes at once.
		s.line = append(s.line, b)
		if buf, _ := s.r.Peek(s.r.Buffered()); len(buf) > 0 {
			n := bytes.IndexAny(buf, "\r\n")
			if n < 0 {
				n = len(buf)
			}
			if len(s.line)+n > s.max {
				return nil, errEventTooLarge
			}
			s.line = append(s.line, buf[:n]...)
			s.r.Discard(n)
		}
	}
}

// next returns the next event that has data. Events without data (e.g. the
// priming event of 2025-11-25) still update the last event ID and retry.
// At the end of the stream it returns io.EOF (an unterminated event is
// dropped, as the SSE rules say).
func (s *sseReader) next() (*sseEvent, error) {
	var ev sseEvent
	s.data = s.data[:0]
	s.hasData = false
	for {
		line, err := s.readLine()
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			if !s.hasData || len(s.data) == 0 {
				// Nothing to dispatch (a priming event, or only comments);
				// the id and retry fields still took effect.
				ev = sseEvent{}
				s.hasData = false
				continue
			}
			ev.ID = s.lastID
			ev.Data = append([]byte(nil), s.data...)
			return &ev, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if s.hasData {
				s.data = append(s.data, '\n')
			}
			if len(s.data)+len(value) > s.max {
				return nil, errEventTooLarge
			}
			s.data = append(s.data, value...)
			s.hasData = true
		case "event":
			ev.Event = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				s.lastID = string(value)
				ev.HasID = true
			}
		case "retry":
			if n, err := strconv.ParseUint(string(value), 10, 31); err == nil && len(value) > 0 {
				s.retry = time.Duration(n) * time.Millisecond
			}
		}
	}
}
