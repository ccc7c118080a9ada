package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/test/replicas/proxy"
)

// backend is a replica stand-in: it passes health checks (unless sick),
// answers other requests with its name and the Host it saw, and serves
// /slow and /sse for the streaming and draining tests.
type backend struct {
	name string
	*httptest.Server
	mu      sync.Mutex
	sick    bool
	release chan struct{} // /slow and the second /sse event wait for it
	started chan struct{} // /slow signals when it has begun
}

func newBackend(t *testing.T, name string) *backend {
	b := &backend{name: name, release: make(chan struct{}), started: make(chan struct{}, 8)}
	b.Server = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.Close)
	return b
}

func (b *backend) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if bytes.Contains(body, []byte(`"server/discover"`)) {
		b.mu.Lock()
		sick := b.sick
		b.mu.Unlock()
		if sick {
			http.Error(w, "sick", http.StatusInternalServerError)
			return
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":"health","result":{}}`)
		return
	}
	switch r.URL.Path {
	case "/slow":
		b.started <- struct{}{}
		<-b.release
	case "/sse":
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		<-b.release
		io.WriteString(w, "data: second\n\n")
		return
	}
	fmt.Fprintf(w, "%s %s", b.name, r.Host)
}

func start(t *testing.T, names ...string) (*proxy.Proxy, *httptest.Server, []*backend) {
	t.Helper()
	var logs mcptest.LogBuffer
	p := proxy.New(&proxy.Options{Log: &logs, HealthInterval: 20 * time.Millisecond})
	var bs []*backend
	for _, n := range names {
		b := newBackend(t, n)
		if err := p.Add(context.Background(), n, b.URL+"/mcp"); err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	return p, front, bs
}

func post(t *testing.T, url, session, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func served(t *testing.T, url, session string) string {
	t.Helper()
	status, body := post(t, url+"/mcp", session, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if status != http.StatusOK {
		t.Fatalf("HTTP %d %s", status, body)
	}
	name, _, _ := strings.Cut(body, " ")
	return name
}

func TestRoundRobinPerRequest(t *testing.T) {
	t.Parallel()
	p, front, _ := start(t, "a", "b", "c")
	var got []string
	for range 6 {
		got = append(got, served(t, front.URL, "")) // one keep-alive connection
	}
	if strings.Join(got, "") != "abcabc" {
		t.Errorf("served by %v, want a b c a b c", got)
	}
	// Two sessions interleaved: each one's consecutive requests still go
	// to different replicas.
	last := map[string]string{}
	for i := range 12 {
		s := []string{"s1", "s2"}[i%2]
		r := served(t, front.URL, s)
		if r == last[s] {
			t.Fatalf("two consecutive requests of session %s went to %s", s, r)
		}
		last[s] = r
	}
	// A record is filed once its handler has returned.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p.WaitRecords(ctx, func(recs []proxy.Record) bool { return len(recs) >= 18 })
	recs := p.Records()
	if len(recs) != 18 || recs[0].Kind != "request" || recs[0].RPCMethod != "tools/list" || recs[0].RPCID != "1" || recs[7].Session != "s2" {
		t.Errorf("records: %+v", recs)
	}
}

func TestHostIsKept(t *testing.T) {
	t.Parallel()
	_, front, _ := start(t, "a")
	req, _ := http.NewRequest(http.MethodPost, front.URL+"/mcp", strings.NewReader("{}"))
	req.Host = "evil.example:80"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "a evil.example:80" {
		t.Errorf("the replica saw %q, want the client's Host", b)
	}
}

// TestStreaming checks that an SSE event reaches the client before the
// replica writes the next one.
func TestStreaming(t *testing.T) {
	t.Parallel()
	_, front, bs := start(t, "a")
	resp, err := http.Post(front.URL+"/sse", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	first := make(chan string, 1)
	go func() {
		line, _ := rd.ReadString('\n')
		first <- line
	}()
	select {
	case line := <-first:
		if line != "data: first\n" {
			t.Fatalf("first line %q", line)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first event was not flushed through")
	}
	close(bs[0].release)
	rest, _ := io.ReadAll(rd)
	if !strings.Contains(string(rest), "data: second") {
		t.Errorf("rest of the stream: %q", rest)
	}
}

// waitHealth waits until the proxy's health checks find the replica name
// healthy or not.
func waitHealth(t *testing.T, p *proxy.Proxy, name string, healthy bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.WaitHealth(ctx, name, healthy); err != nil {
		t.Fatalf("replica %s healthy=%v: %v", name, healthy, err)
	}
}

func TestUnhealthyReplicasAreSkipped(t *testing.T) {
	t.Parallel()
	p, front, bs := start(t, "a", "b", "c")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Run(ctx)

	// b fails its health checks: it gets no requests until it recovers.
	bs[1].mu.Lock()
	bs[1].sick = true
	bs[1].mu.Unlock()
	waitHealth(t, p, "b", false)
	for range 6 {
		if r := served(t, front.URL, ""); r == "b" {
			t.Fatal("a request went to the sick replica")
		}
	}
	bs[1].mu.Lock()
	bs[1].sick = false
	bs[1].mu.Unlock()
	waitHealth(t, p, "b", true)
	seen := map[string]bool{}
	for range 3 {
		seen[served(t, front.URL, "")] = true
	}
	if !seen["b"] {
		t.Fatal("the recovered replica gets no requests")
	}

	// c dies: the first request that reaches it fails with 502 (the proxy
	// never retries), and the next ones skip it.
	cancel()
	bs[2].CloseClientConnections()
	bs[2].Close()
	var statuses []int
	for range 6 {
		status, _ := post(t, front.URL+"/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		statuses = append(statuses, status)
	}
	bad := 0
	for _, s := range statuses {
		if s == http.StatusBadGateway {
			bad++
		}
	}
	if bad > 1 {
		t.Errorf("statuses %v: more than one request went to the dead replica", statuses)
	}
}

// waitDraining waits until requests without a session go to only alone: the
// other replicas are draining.
func waitDraining(t *testing.T, url, only string) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if served(t, url, "") == only && served(t, url, "") == only {
			return
		}
	}
	t.Fatalf("requests still reach replicas other than %s", only)
}

func TestDrain(t *testing.T) {
	t.Parallel()
	p, front, bs := start(t, "a", "b")
	// A slow request in flight on a.
	done := make(chan string)
	go func() {
		resp, err := http.Post(front.URL+"/slow", "application/json", strings.NewReader("{}"))
		if err != nil {
			done <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- string(b)
	}()
	<-bs[0].started
	drained := make(chan int)
	go func() {
		n, err := p.Drain(context.Background(), "a")
		if err != nil {
			t.Error(err)
		}
		drained <- n
	}()
	// Once a is draining (requests go to b only), Drain cannot return until
	// the request in flight on a ends: it is still in flight.
	waitDraining(t, front.URL, "b")
	select {
	case <-drained:
		t.Fatal("Drain returned with a request in flight")
	default:
	}
	for range 4 {
		if r := served(t, front.URL, ""); r != "b" {
			t.Fatalf("a draining replica got a request (%s)", r)
		}
	}
	close(bs[0].release)
	if n := <-drained; n != 0 {
		t.Errorf("Drain left %d requests in flight", n)
	}
	if body := <-done; !strings.HasPrefix(body, "a ") {
		t.Errorf("the request in flight was answered %q", body)
	}

	// A drain that times out reports what is left.
	go func() {
		if resp, err := http.Post(front.URL+"/slow", "application/json", strings.NewReader("{}")); err == nil {
			resp.Body.Close()
		}
	}()
	<-bs[1].started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if n, _ := p.Drain(ctx, "b"); n != 1 {
		t.Errorf("Drain with a stuck request = %d, want 1", n)
	}
	close(bs[1].release)
	p.Remove("a")
	p.Remove("b")
	if status, _ := post(t, front.URL+"/mcp", "", "{}"); status != http.StatusServiceUnavailable {
		t.Errorf("with no replica: HTTP %d, want 503", status)
	}
}
