package mcptest_test

import (
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/internal/mcptest"
)

func TestSSEReader(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		want     []mcptest.Event
		lastID   string
	}{
		{"one event", "data: {\"a\":1}\n\n", []mcptest.Event{{Data: `{"a":1}`}}, ""},
		{"fields", "id: 7\nevent: message\nretry: 1000\ndata: x\n\n", []mcptest.Event{{ID: "7", Type: "message", Retry: "1000", Data: "x"}}, "7"},
		{"multi-line data", "data: a\ndata:b\ndata:  c\n\n", []mcptest.Event{{Data: "a\nb\n c"}}, ""},
		{"line endings", "data: a\r\n\r\ndata: b\r\rdata: c\n\n", []mcptest.Event{{Data: "a"}, {Data: "b"}, {Data: "c"}}, ""},
		{"comments and blank lines", ": hi\n\n\n: ping\ndata: x\n\n", []mcptest.Event{{Data: "x"}}, ""},
		{"empty data dispatches", "id: p\ndata:\n\n", []mcptest.Event{{ID: "p"}}, "p"},
		{"no data: not dispatched, id kept", "id: 3\n\nretry: 5\n\ndata: y\n\n", []mcptest.Event{{Data: "y"}}, "3"},
		{"id with NUL ignored", "id: a\x00b\ndata: x\n\n", []mcptest.Event{{Data: "x"}}, ""},
		{"unterminated", "data: x\n\ndata: last", []mcptest.Event{{Data: "x"}, {Data: "last"}}, ""},
		{"field without colon", "data\n\n", []mcptest.Event{{}}, ""},
		{"unknown field ignored", "foo: bar\ndata: x\n\n", []mcptest.Event{{Data: "x"}}, ""},
		{"empty", "", nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := mcptest.NewSSEReader(strings.NewReader(tc.in))
			var got []mcptest.Event
			for {
				ev, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, ev)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("events %+v, want %+v", got, tc.want)
			}
			if r.LastEventID() != tc.lastID {
				t.Fatalf("LastEventID %q, want %q", r.LastEventID(), tc.lastID)
			}
			if _, err := r.Next(); err != io.EOF {
				t.Fatalf("Next after the end: %v, want io.EOF", err)
			}
		})
	}
}

func TestSSEReaderStrict(t *testing.T) {
	t.Parallel()
	evs, err := mcptest.ReadEvents(strings.NewReader("data: a\n\nfoo: bar\ndata: b\n\n"), true)
	if err == nil || !strings.Contains(err.Error(), `"foo: bar"`) || len(evs) != 1 || evs[0].Data != "a" {
		t.Fatalf("strict: %+v, %v; want the first event and an error naming the line", evs, err)
	}
	evs, err = mcptest.ReadEvents(strings.NewReader(": c\nid: 1\nevent: e\nretry: 3\ndata: a\n\n"), true)
	if err != nil || len(evs) != 1 {
		t.Fatalf("strict, every field: %+v, %v", evs, err)
	}
}

func TestSSEReaderLongLine(t *testing.T) {
	t.Parallel()
	long := "data: " + strings.Repeat("x", mcptest.MaxSSELine) + "\n\n"
	if _, err := mcptest.ReadEvents(strings.NewReader(long), false); err == nil {
		t.Fatal("a line over MaxSSELine was read")
	}
}

func TestReadSSE(t *testing.T) {
	t.Parallel()
	var got []string
	err := mcptest.ReadSSE(strings.NewReader("retry: 5\n\nid: p\ndata:\n\ndata: 1\n\ndata: 2\n\n"), func(d []byte) error {
		got = append(got, string(d))
		return nil
	})
	if err != nil || !reflect.DeepEqual(got, []string{"1", "2"}) {
		t.Fatalf("%q, %v; want the two events with data", got, err)
	}
	stop := errors.New("stop")
	n := 0
	err = mcptest.ReadSSE(strings.NewReader("data: 1\n\ndata: 2\n\n"), func([]byte) error { n++; return stop })
	if err != stop || n != 1 {
		t.Fatalf("fn's error: %v after %d calls", err, n)
	}
}

// TestEventStream: events arrive as they are written, before the stream
// ends; the end and Close are seen.
func TestEventStream(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		pr, pw := io.Pipe()
		s := mcptest.NewEventStream(pr, false)
		go io.WriteString(pw, "data: 1\n\n")
		ev, err := s.Next(t.Context())
		if err != nil || ev.Data != "1" {
			t.Fatalf("first event %+v, %v", ev, err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := s.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Next with nothing sent: %v, want the context's error", err)
		}
		go func() {
			io.WriteString(pw, "id: 2\ndata: 2\n\n")
			pw.Close()
		}()
		if ev, err := s.Next(t.Context()); err != nil || ev.Data != "2" || ev.ID != "2" {
			t.Fatalf("second event %+v, %v", ev, err)
		}
		if _, err := s.Next(t.Context()); err != mcptest.ErrStreamEnded {
			t.Fatalf("after the end: %v, want ErrStreamEnded", err)
		}
		<-s.Ended()
		if s.Err() != nil {
			t.Fatalf("Err after a clean end: %v", s.Err())
		}
		s.Close()

		// A stream that fails reports its error; Close ends one that is
		// still open.
		pr, pw = io.Pipe()
		s = mcptest.NewEventStream(pr, true)
		go io.WriteString(pw, "bogus\n")
		if _, err := s.Next(t.Context()); err == nil || err == mcptest.ErrStreamEnded {
			t.Fatalf("strict stream with a bad line: %v", err)
		}
		pr, _ = io.Pipe()
		s = mcptest.NewEventStream(pr, false)
		s.Close()
		if _, err := s.Next(t.Context()); err == nil {
			t.Fatal("Next after Close succeeded")
		}
	})
}
