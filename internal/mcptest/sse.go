package mcptest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Event is one event of a text/event-stream body, as the WHATWG HTML
// standard's "interpreting an event stream" (§9.2.6) dispatches it.
type Event struct {
	// ID is the value of the event's own id field; "" when it has none
	// (see SSEReader.LastEventID for the id a client resumes from).
	ID string
	// Type is the value of the event field; "" when it has none (a
	// "message").
	Type string
	// Data is the value of the data fields, joined with "\n". An event
	// with a data field holding nothing ("data:") has Data "".
	Data string
	// Retry is the value of the retry field as sent; "" when it has none.
	Retry string
}

// MaxSSELine bounds one line of an event stream read by SSEReader: longer
// lines end the stream with bufio.ErrTooLong.
const MaxSSELine = 16 << 20

// SSEReader reads the events of a text/event-stream one at a time. Lines
// may end with LF, CRLF or CR. It is not safe for concurrent use.
type SSEReader struct {
	// Strict makes Next fail on a line that is neither a comment nor one of
	// the fields id, event, data and retry: a client ignores such a line,
	// but a server under test must not send one.
	Strict bool

	sc     *bufio.Scanner
	lastID string
	err    error
}

// NewSSEReader returns a reader of the events of r.
func NewSSEReader(r io.Reader) *SSEReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxSSELine)
	sc.Split(scanSSELines)
	return &SSEReader{sc: sc}
}

// Next returns the next dispatched event: a blank line, or the end of the
// stream, ends an event that has a data field; one without (an id or retry
// field alone) is not dispatched, but its id still sets LastEventID. Next
// returns io.EOF after the last event, or the error that ended the stream.
func (r *SSEReader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	var ev Event
	var data []byte
	hasData := false
	dispatch := func() (Event, bool) {
		if !hasData {
			ev = Event{}
			return Event{}, false
		}
		out := ev
		out.Data = string(data)
		ev, data, hasData = Event{}, nil, false
		return out, true
	}
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if len(line) == 0 {
			if out, ok := dispatch(); ok {
				return out, nil
			}
			continue
		}
		if line[0] == ':' {
			continue // a comment
		}
		field, value, found := bytes.Cut(line, []byte(":"))
		if found {
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.ID = string(value)
				r.lastID = ev.ID
			}
		case "event":
			ev.Type = string(value)
		case "retry":
			ev.Retry = string(value)
		default:
			if r.Strict {
				r.err = fmt.Errorf("mcptest: unexpected SSE line %q", line)
				return Event{}, r.err
			}
		}
	}
	r.err = r.sc.Err()
	if r.err == nil {
		r.err = io.EOF
	}
	if out, ok := dispatch(); ok {
		return out, nil
	}
	return Event{}, r.err
}

// LastEventID returns the last id field read so far, in this event or an
// earlier one: the Last-Event-ID a client reconnecting now would send.
func (r *SSEReader) LastEventID() string { return r.lastID }

// scanSSELines is bufio.ScanLines for the three line endings of the event
// stream format: CRLF, LF and a lone CR.
func scanSSELines(data []byte, atEOF bool) (int, []byte, error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\n' {
			return i + 1, data[:i], nil
		}
		if i+1 < len(data) {
			if data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		}
		if atEOF {
			return i + 1, data[:i], nil
		}
		return 0, nil, nil // a CR at the end: is an LF next?
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// EachEvent calls fn with each event of an event stream, in order, until
// the stream or fn fails or the stream ends (nil). strict is
// SSEReader.Strict.
func EachEvent(r io.Reader, strict bool, fn func(Event) error) error {
	sr := NewSSEReader(r)
	sr.Strict = strict
	for {
		ev, err := sr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
}

// ReadEvents returns every event of an event stream. strict is
// SSEReader.Strict.
func ReadEvents(r io.Reader, strict bool) ([]Event, error) {
	var out []Event
	err := EachEvent(r, strict, func(ev Event) error {
		out = append(out, ev)
		return nil
	})
	return out, err
}

// ReadSSE calls fn with the data of each event of an event stream, skipping
// events whose data is empty, until the stream or fn fails or the stream
// ends (nil).
func ReadSSE(rd io.Reader, fn func(data []byte) error) error {
	return EachEvent(rd, false, func(ev Event) error {
		if ev.Data == "" {
			return nil
		}
		return fn([]byte(ev.Data))
	})
}

// ErrStreamEnded is returned by EventStream.Next when the stream ended
// cleanly.
var ErrStreamEnded = errors.New("mcptest: the event stream ended")

// EventStream reads a live event stream in the background and delivers its
// events as they arrive. Its methods are safe for concurrent use; each event
// is delivered once.
type EventStream struct {
	c      chan Event
	body   io.ReadCloser
	done   chan struct{} // closed by Close
	ended  chan struct{} // closed when the reader stops
	once   sync.Once
	err    error // why the stream ended; set before ended closes
	strict bool
}

// NewEventStream starts reading body, which it owns: Close closes it. strict
// is SSEReader.Strict.
func NewEventStream(body io.ReadCloser, strict bool) *EventStream {
	s := &EventStream{c: make(chan Event), body: body, done: make(chan struct{}), ended: make(chan struct{}), strict: strict}
	go s.read()
	return s
}

func (s *EventStream) read() {
	defer close(s.ended)
	sr := NewSSEReader(s.body)
	sr.Strict = s.strict
	for {
		ev, err := sr.Next()
		if err != nil {
			if err != io.EOF {
				s.err = err
			}
			return
		}
		select {
		case s.c <- ev:
		case <-s.done:
			return
		}
	}
}

// Next returns the next event; ErrStreamEnded once the stream has ended and
// every event was delivered, the stream's error if it failed, or ctx's
// error when ctx ends first.
func (s *EventStream) Next(ctx context.Context) (Event, error) {
	select {
	case ev := <-s.c:
		return ev, nil
	case <-s.ended:
		if s.err != nil {
			return Event{}, s.err
		}
		return Event{}, ErrStreamEnded
	case <-ctx.Done():
		return Event{}, ctx.Err()
	}
}

// Ended is closed when the stream has ended (or Close was called) and no
// event is left to deliver.
func (s *EventStream) Ended() <-chan struct{} { return s.ended }

// Err returns why the stream ended: nil for a clean end (or before it
// ends).
func (s *EventStream) Err() error {
	select {
	case <-s.ended:
		return s.err
	default:
		return nil
	}
}

// Close stops reading and closes the body. It may be called more than once.
func (s *EventStream) Close() {
	s.once.Do(func() {
		close(s.done)
		s.body.Close()
	})
	<-s.ended
}
