package core_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// Long-lived streams (subscriptions/listen, the legacy GET stream) are
// bounded per caller and per instance. The tests use task_poll_test.go's
// fixture, in synctest bubbles: a stream that ends gives its place back
// once synctest.Wait has let its handler return.

// Beyond the default bound of anonymous streams (100 per instance), the
// next listen is refused at once with -31429 (HTTP 429, Retry-After), and
// the streams already open keep delivering.
func TestListenRefusedBeyondAnonymousBound(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newStreamFixture(t, &core.ServerOptions{})
		var streams []*sseStream
		for i := range 100 {
			s, _ := f.listen(t, i, "", map[string]any{"toolsListChanged": true})
			streams = append(streams, s)
		}
		// A stream wrongly accepted ends with the request's context, so
		// the check fails rather than waiting.
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		r := listenReq(100, "", map[string]any{"toolsListChanged": true}).withContext(ctx).post(t, f.hc, streamURL)
		e := r.wantError(t, http.StatusTooManyRequests, core.CodeLimitExceeded)
		if str(at(e, "data", "reason")) != "too_many_streams" || num(t, at(e, "data", "limit")) != 100 {
			t.Errorf("refusal data %v, want reason too_many_streams, limit 100", e["data"])
		}
		if ra := r.Header.Get("Retry-After"); ra == "" || strings.TrimLeft(ra, "0123456789") != "" {
			t.Errorf("Retry-After %q, want whole seconds", ra)
		}
		core.AddTool(f.srv, &core.Tool{Name: "late"}, func(context.Context, *core.CallToolRequest, struct{}) (string, error) { return "", nil })
		for i, s := range streams {
			if n := s.next(time.Second); n["method"] != "notifications/tools/list_changed" {
				t.Fatalf("stream %d after the refusal: %v, want tools/list_changed", i, n)
			}
		}
	})
}

// refused checks that r is the -31429 refusal of a stream (HTTP 429,
// Retry-After in whole seconds) for reason at limit.
func refused(t *testing.T, r *resp, reason string, limit int64) {
	t.Helper()
	e := r.wantError(t, http.StatusTooManyRequests, core.CodeLimitExceeded)
	if str(at(e, "data", "reason")) != reason || num(t, at(e, "data", "limit")) != limit {
		t.Errorf("refusal data %v, want reason %s, limit %d", e["data"], reason, limit)
	}
	if num(t, at(e, "data", "retryAfterMs")) != core.DefaultStreamKeepAlive.Milliseconds() || r.Header.Get("Retry-After") != "15" {
		t.Errorf("retry after %v ms, Retry-After %q: want the keep-alive interval, 15 s", at(e, "data", "retryAfterMs"), r.Header.Get("Retry-After"))
	}
}

// tryListen posts a listen that must be refused: a stream wrongly
// accepted ends with the request's context, so the check fails rather
// than waits.
func (f *streamFixture) tryListen(t *testing.T, subject string, taskIDs ...string) *resp {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	n := map[string]any{"toolsListChanged": true}
	if taskIDs != nil {
		n["taskIds"] = taskIDs
	}
	return listenReq("x", subject, n).withContext(ctx).post(t, f.hc, streamURL)
}

// tryGet opens the GET stream of c's session; a refusal is returned as a
// resp, an open stream as an sseStream.
func (f *streamFixture) tryGet(t *testing.T, c *mcptest.Client) (*resp, *sseStream) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, streamURL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(core.HeaderSessionID, c.SessionID)
	req.Header.Set(core.HeaderProtocolVersion, c.Version)
	for k, v := range c.Header {
		req.Header[k] = v
	}
	res, err := f.hc.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode == http.StatusOK {
		return nil, newSSEStream(t, res, cancel)
	}
	defer cancel()
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return parseResp(t, res.StatusCode, res.Header, b), nil
}

// Streams are bounded per principal, for anonymous callers together and
// per instance, listen and legacy GET streams counted together: the
// stream beyond is refused at once (-31429, HTTP 429, Retry-After), the
// open ones keep delivering, and a stream that ends gives its place back.
// A GET stream that replaces its session's takes over its place.
func TestStreamBounds(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newStreamFixture(t, &core.ServerOptions{MaxStreamsPerPrincipal: 2, MaxAnonymousStreams: 3, MaxStreams: 6})
		var open []*sseStream
		listen := func(subject string) *sseStream {
			s, _ := f.listen(t, "l", subject, map[string]any{"toolsListChanged": true})
			open = append(open, s)
			return s
		}
		ids := f.tasks(t, "alice", 32)
		alice1 := listen("alice")
		listen("alice")
		// Refused before anything else: no store read for its 32 tasks.
		before := f.store.gets.Load()
		refused(t, f.tryListen(t, "alice", ids...), "too_many_streams", 2)
		if n := f.store.gets.Load() - before; n != 0 {
			t.Errorf("a refused listen naming 32 tasks read the store %d times, want 0", n)
		}
		for range 3 {
			listen("")
		}
		refused(t, f.tryListen(t, ""), "too_many_streams", 3)
		listen("bob")
		// Six streams: the instance is full, whoever asks.
		refused(t, f.tryListen(t, "carol"), "instance_streams_full", 6)
		refused(t, f.tryListen(t, "bob"), "instance_streams_full", 6)

		// The open streams keep delivering.
		core.AddTool(f.srv, &core.Tool{Name: "late"}, func(context.Context, *core.CallToolRequest, struct{}) (string, error) { return "", nil })
		for i, s := range open {
			if n := s.next(time.Second); n["method"] != "notifications/tools/list_changed" {
				t.Fatalf("open stream %d after the refusals: %v, want tools/list_changed", i, n)
			}
		}

		// A legacy GET stream counts with the listen streams: alice, at
		// her bound, is refused one; once a listen stream of hers ends,
		// she gets it.
		c := &mcptest.Client{URL: streamURL, HTTP: f.hc, Header: http.Header{"X-Subject": {"alice"}}}
		if _, err := c.Initialize(t.Context(), core.ProtocolVersion20251125, nil); err != nil {
			t.Fatal(err)
		}
		r, _ := f.tryGet(t, c)
		if r == nil {
			t.Fatal("alice's GET stream was accepted beyond her bound")
		}
		refused(t, r, "too_many_streams", 2)
		alice1.close()
		synctest.Wait()
		_, get := f.tryGet(t, c)
		if get == nil {
			t.Fatal("alice's GET stream was refused after one of her streams ended")
		}
		// Opening it again replaces it, in its place: alice's count is
		// still 2 (the replaced stream ends), so a listen is refused.
		_, get2 := f.tryGet(t, c)
		if get2 == nil {
			t.Fatal("the GET stream that replaces alice's own was refused")
		}
		get.ends(time.Second)
		refused(t, f.tryListen(t, "alice"), "too_many_streams", 2)
		core.AddTool(f.srv, &core.Tool{Name: "later"}, func(context.Context, *core.CallToolRequest, struct{}) (string, error) { return "", nil })
		if n := get2.next(time.Second); n["method"] != "notifications/tools/list_changed" {
			t.Fatalf("the replacing GET stream: %v, want tools/list_changed", n)
		}
		// The session ends (DELETE): its GET stream's place is given back.
		if st, err := c.Delete(t.Context()); err != nil || st != http.StatusNoContent {
			t.Fatalf("DELETE: %d %v", st, err)
		}
		get2.closes(time.Second)
		synctest.Wait()
		listen("alice")
	})
}

// Negative bounds mean none.
func TestStreamBoundsNegativeIsUnbounded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newStreamFixture(t, &core.ServerOptions{MaxStreamsPerPrincipal: -1, MaxAnonymousStreams: -1, MaxStreams: -1})
		for i := range 150 {
			f.listen(t, i, "", map[string]any{"toolsListChanged": true})
		}
		for i := range 20 {
			f.listen(t, i, "alice", map[string]any{"toolsListChanged": true})
		}
		if err := (&core.ServerOptions{MaxStreamsPerPrincipal: -1, MaxAnonymousStreams: -1, MaxStreams: -1}).Validate(); err != nil {
			t.Errorf("Validate: %v", err)
		}
	})
}
