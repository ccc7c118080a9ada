package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/test/internal/taskwire"
	"github.com/mcpfn/mcpfn/test/replicas/storeproxy"
)

// Long-lived streams against examples/everything as a process: the
// subscriptions/listen streams of a replica share one store read per
// watched task per poll interval (counted as GetItem calls by the store
// proxy), the stream beyond the anonymous bound is refused with -31429
// while the others keep delivering, and a store that is cut off ends no
// stream.

// taskPoll is the replicas' task poll interval in these tests (-task-poll):
// the default, core.DefaultTaskPollInterval. At it, dynalite serves the
// reads of one stream per task per interval (320 per second for ten
// streams on 32 tasks) without saturating, so a count above the bound
// shows.
const taskPoll = time.Second

// postListen POSTs a subscriptions/listen with notifications to url and
// returns the response, whose body is the stream when it is 200.
func postListen(ctx context.Context, url string, id int, notifications map[string]any) (*http.Response, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": map[string]any{
		"notifications": notifications,
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    mcptest.Modern,
			"io.modelcontextprotocol/clientCapabilities": taskCaps,
		}}})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", mcptest.Modern)
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	return http.DefaultClient.Do(req)
}

// message is the part of a JSON-RPC message the tests read.
type message struct {
	Method string `json:"method"`
	Params struct {
		Notifications struct {
			TaskIDs []string `json:"taskIds"`
		} `json:"notifications"`
		TaskID string `json:"taskId"`
		Status string `json:"status"`
		URI    string `json:"uri"`
	} `json:"params"`
	Error *mcptest.RPCError `json:"error"`
}

// listenStream is an open listen stream.
type listenStream struct {
	ev  *mcptest.EventStream
	ack message
}

// listen opens a listen stream on url and reads its acknowledgement; it
// is closed when the test ends.
func listen(t *testing.T, url string, id int, notifications map[string]any) *listenStream {
	t.Helper()
	res, err := postListen(t.Context(), url, id, notifications)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		t.Fatalf("listen %d on %s: HTTP %d %s", id, url, res.StatusCode, b)
	}
	s := &listenStream{ev: mcptest.NewEventStream(res.Body, false)}
	t.Cleanup(s.ev.Close)
	if m := s.next(t, 10*time.Second); m.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("listen %d: first message %+v, want the acknowledgement", id, m)
	} else {
		s.ack = m
	}
	return s
}

// next returns the stream's next message, failing the test after limit.
func (s *listenStream) next(t *testing.T, limit time.Duration) message {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	ev, err := s.ev.Next(ctx)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	var m message
	if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
		t.Fatalf("stream: %v: %s", err, ev.Data)
	}
	return m
}

// nextTask returns the stream's next notifications/tasks.
func (s *listenStream) nextTask(t *testing.T, limit time.Duration) message {
	t.Helper()
	for {
		if m := s.next(t, limit); m.Method == "notifications/tasks" {
			return m
		}
	}
}

// waitingTasks creates n confirm_delete tasks on url and waits until each
// waits for input: no run holds them (no heartbeats, no run reads), so
// the listen streams' polls are the only reads of them.
func waitingTasks(t *testing.T, url string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = createTask(t, url, "confirm_delete", map[string]any{"filename": fmt.Sprintf("f%d.txt", i)})
	}
	for _, id := range ids {
		waitTask(t, []string{url}, id, 10*time.Second, func(tk *taskwire.Task) bool { return tk.Status == "input_required" })
	}
	sort.Strings(ids)
	return ids
}

// getItems counts the GetItem calls the store proxy forwards over the
// next window, and the poll intervals the window spans (rounded up, plus
// the round in flight when it began).
func getItems(t *testing.T, c *Cluster, window time.Duration) (reads, intervals int, perSecond float64) {
	t.Helper()
	before := c.Store.Counts()["GetItem"]
	start := time.Now()
	select {
	case <-t.Context().Done():
		t.Fatal(t.Context().Err())
	case <-time.After(window):
	}
	elapsed := time.Since(start)
	reads = c.Store.Counts()["GetItem"] - before
	return reads, int((elapsed+taskPoll-1)/taskPoll) + 1, float64(reads) / elapsed.Seconds()
}

// TestListenStoreReadsOneProcess: ten listen streams on one replica watch
// the same 32 tasks; the replica reads each task once per poll interval,
// not once per stream (32 reads per interval, not 320).
func TestListenStoreReadsOneProcess(t *testing.T) {
	t.Parallel()
	c := newClusterWith(t, Config{Replicas: 1, StoreProxy: true, ReplicaArgs: []string{"-task-poll", taskPoll.String()}})
	url := c.Replica(0).URL
	ids := waitingTasks(t, url, 32)
	if idle, _, _ := getItems(t, c, 2*taskPoll); idle != 0 {
		t.Fatalf("%d GetItem calls with no stream open, want 0", idle)
	}
	for i := range 10 {
		s := listen(t, url, i, map[string]any{"taskIds": ids})
		if fmt.Sprint(s.ack.Params.Notifications.TaskIDs) != fmt.Sprint(ids) {
			t.Fatalf("stream %d acknowledged %v, want the 32 tasks", i, s.ack.Params.Notifications.TaskIDs)
		}
	}
	reads, intervals, perSecond := getItems(t, c, 8*taskPoll)
	t.Logf("10 streams watching 32 tasks, poll interval %v: %d GetItem in %d intervals, %.0f reads/s", taskPoll, reads, intervals, perSecond)
	if reads > 32*intervals {
		t.Errorf("%d GetItem calls within %d poll intervals: more than one read per task per interval (32 tasks)", reads, intervals)
	}
	if reads < 32 {
		t.Errorf("%d GetItem calls within %d poll intervals: the watched tasks are not polled", reads, intervals)
	}
}

// TestListenRefusedOneProcess: beyond the default bound of anonymous
// streams (100 per instance) the next listen is refused at once with
// -31429, HTTP 429 and Retry-After; the open streams keep delivering, task
// notifications and resource updates alike.
func TestListenRefusedOneProcess(t *testing.T) {
	t.Parallel()
	c := newClusterWith(t, Config{Replicas: 1, StoreProxy: true, ReplicaArgs: []string{"-task-poll", taskPoll.String(), "-watch-every", "3s"}})
	url := c.Replica(0).URL
	ids := waitingTasks(t, url, 2)
	var taskStreams, resourceStreams []*listenStream
	for i := range 10 {
		taskStreams = append(taskStreams, listen(t, url, i, map[string]any{"taskIds": ids}))
	}
	for i := 10; i < 100; i++ {
		resourceStreams = append(resourceStreams, listen(t, url, i, map[string]any{"resourceSubscriptions": []string{"test://watched-resource"}}))
	}
	// A stream wrongly accepted ends with this context, so the check
	// fails rather than waits.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := postListen(ctx, url, 100, map[string]any{"taskIds": ids})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var m message
	json.Unmarshal(b, &m)
	if res.StatusCode != http.StatusTooManyRequests || m.Error == nil || m.Error.Code != -31429 {
		t.Fatalf("the 101st anonymous stream: HTTP %d %s, want 429 with -31429", res.StatusCode, b)
	}
	var data struct {
		Reason       string `json:"reason"`
		Limit        int    `json:"limit"`
		RetryAfterMs int    `json:"retryAfterMs"`
	}
	json.Unmarshal(m.Error.Data, &data)
	if ra, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || ra < 1 || data.Reason != "too_many_streams" || data.Limit != 100 || data.RetryAfterMs != ra*1000 {
		t.Errorf("refusal: Retry-After %q, data %s; want whole seconds, reason too_many_streams, limit 100", res.Header.Get("Retry-After"), m.Error.Data)
	}

	// The open streams keep delivering: the task cancelled reaches the
	// ten task streams, the next resource update the ninety others.
	taskRequest(t, url, "tasks/cancel", ids[0], nil)
	for i, s := range taskStreams {
		if m := s.nextTask(t, 10*time.Second); m.Params.TaskID != ids[0] || m.Params.Status != "cancelled" {
			t.Fatalf("task stream %d after the refusal: %+v, want %s cancelled", i, m.Params, ids[0])
		}
	}
	var wg sync.WaitGroup
	for i, s := range resourceStreams {
		wg.Go(func() {
			if m := s.next(t, 10*time.Second); m.Method != "notifications/resources/updated" || m.Params.URI != "test://watched-resource" {
				t.Errorf("resource stream %d after the refusal: %+v", i, m)
			}
		})
	}
	wg.Wait()
}

// TestListenAcrossReplicasStoreCut: ten streams on each of three
// replicas watch the same 32 tasks. Each replica reads each task once per interval, whatever
// its number of streams; cutting the store off ends no stream, and once
// it is back a change made through one replica reaches the streams on
// every replica.
func TestListenAcrossReplicasStoreCut(t *testing.T) {
	t.Parallel()
	c := newClusterWith(t, Config{Replicas: 3, StoreProxy: true, ReplicaArgs: []string{"-task-poll", taskPoll.String()}})
	urls := urlsOf(c, 0, 1, 2)
	ids := waitingTasks(t, urls[0], 32)
	var streams []*listenStream
	for i := range 30 {
		streams = append(streams, listen(t, urls[i%3], i, map[string]any{"taskIds": ids}))
	}
	reads, intervals, perSecond := getItems(t, c, 8*taskPoll)
	t.Logf("30 streams on 3 replicas watching 32 tasks: %d GetItem in %d intervals, %.0f reads/s", reads, intervals, perSecond)
	if reads > 3*32*intervals {
		t.Errorf("%d GetItem calls within %d poll intervals: more than one read per task per replica per interval", reads, intervals)
	}

	// Cut: the replicas' polls fail (the proxy refuses two rounds' worth
	// of reads of the fleet), and no stream ends.
	refusedGets := make(chan struct{}, 1)
	var mu sync.Mutex
	refused := 0
	c.Store.Observe(func(r storeproxy.Request) {
		if r.Op == "GetItem" && r.Refused {
			mu.Lock()
			if refused++; refused == 2*3*32 {
				refusedGets <- struct{}{}
			}
			mu.Unlock()
		}
	})
	c.Store.Cut()
	select {
	case <-refusedGets:
	case <-t.Context().Done():
		t.Fatal(t.Context().Err())
	}
	c.Store.Restore()
	for i, s := range streams {
		select {
		case <-s.ev.Ended():
			t.Fatalf("stream %d ended while the store was cut: %v", i, s.ev.Err())
		default:
		}
	}

	taskRequest(t, urls[1], "tasks/cancel", ids[5], nil)
	for i, s := range streams {
		if m := s.nextTask(t, 20*time.Second); m.Params.TaskID != ids[5] || m.Params.Status != "cancelled" {
			t.Fatalf("stream %d (replica %d) after the outage: %+v, want %s cancelled", i, i%3, m.Params, ids[5])
		}
	}
}
