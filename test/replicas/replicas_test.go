package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/internal/testenv"
	"github.com/mcpfn/mcpfn/test/internal/repo"
	"github.com/mcpfn/mcpfn/test/replicas/proxy"
)

// These tests run the cluster of main.go (dynalite, smfake, replicas of
// examples/everything as processes, the proxy in process) and need dynalite:
// run them under test/dynalite/with.sh, which sets MCPFN_DYNAMODB_ENDPOINT.

var bins = &repo.Binaries{Pattern: "mcpfn-replicas-test-",
	Packages: []string{"./examples/everything", "./store/secretsmanager/internal/smfake/cmd/smfake"}}

func TestMain(m *testing.M) { bins.Main(m) }

// newCluster starts a cluster of n replicas for one test; it is stopped
// when the test ends, and its log (every process's output and the proxy's
// lines) is printed when the test fails.
func newCluster(t *testing.T, n int, replicaArgs ...string) *Cluster {
	t.Helper()
	return newClusterWith(t, Config{Replicas: n, ReplicaArgs: replicaArgs})
}

// newClusterWith starts the cluster cfg describes (Replicas, ReplicaArgs,
// ReplicaEnv, StoreProxy; the rest is filled in) for the test.
func newClusterWith(t *testing.T, cfg Config) *Cluster {
	t.Helper()
	endpoint := testenv.DynamoEndpoint(t)
	root := repo.Root(t)
	dir := bins.Dir(t)
	work := t.TempDir()
	logf, err := os.Create(filepath.Join(work, "cluster.log"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Root, cfg.Work, cfg.Everything, cfg.SMFake = root, work, filepath.Join(dir, "everything"), filepath.Join(dir, "smfake")
	cfg.DynamoEndpoint, cfg.LogLevel = endpoint, "info"
	// The example's watched resource changes every few seconds and each
	// change is published to the store's change log (a GetItem and a
	// PutItem); tests counting store calls would count those too. A test
	// that wants the watcher passes its own -watch-every, which wins.
	cfg.ReplicaArgs = append([]string{"-watch-every", "0"}, cfg.ReplicaArgs...)
	if cfg.Log != nil {
		cfg.Log = io.MultiWriter(logf, cfg.Log) // a test watching the log
	} else {
		cfg.Log = logf
	}
	c, err := StartCluster(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go c.Serve(ctx)
	t.Cleanup(func() {
		cancel()
		c.Close()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			lines := strings.Split(string(b), "\n")
			t.Logf("cluster log (last 150 lines of %d):\n%s", len(lines), strings.Join(lines[max(0, len(lines)-150):], "\n"))
		}
	})
	return c
}

var elicitCaps = map[string]any{"elicitation": map[string]any{}}

// firstRound sends the first round of the fixture's request-state tool to
// url and returns the sealed requestState.
func firstRound(t *testing.T, url string) string {
	t.Helper()
	res, err := (&mcptest.Client{URL: url, Caps: elicitCaps}).Call(t.Context(), "tools/call",
		map[string]any{"name": "test_input_required_result_request_state", "arguments": map[string]any{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		ResultType   string `json:"resultType"`
		RequestState string `json:"requestState"`
	}
	if err := res.Decode(&out); err != nil || out.ResultType != "input_required" || out.RequestState == "" {
		t.Fatalf("first round on %s: %v %s", url, err, res.Result)
	}
	return out.RequestState
}

// retry sends the second round with the confirmation and state to url; it
// returns the result's text, or the JSON-RPC error.
func retry(t *testing.T, url, state string) (string, *mcptest.RPCError) {
	t.Helper()
	res, err := (&mcptest.Client{URL: url, Caps: elicitCaps}).Call(t.Context(), "tools/call", map[string]any{
		"name": "test_input_required_result_request_state", "arguments": map[string]any{},
		"inputResponses": map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}},
		"requestState":   state}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != nil {
		return "", res.Error
	}
	var out struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := res.Decode(&out); err != nil || len(out.Content) == 0 {
		t.Fatalf("second round on %s: %v %s", url, err, res.Result)
	}
	return out.Content[0].Text, nil
}

func keyOf(state string) string { return strings.Split(state, ".")[1] }

// TestRotationAcrossReplicas seals a continuation on one replica, rotates
// the key in Secrets Manager, and continues it on another replica (which
// loaded the keys after the rotation: it seals with the new key and
// verifies with the old, now AWSPREVIOUS); then retires the old key and
// shows that a replica loading the keys afterwards rejects it.
func TestRotationAcrossReplicas(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2)
	ctx := t.Context()
	a := c.Replica(0)
	v1 := a.SealsWith

	sealed := firstRound(t, a.URL)
	if keyOf(sealed) != v1 {
		t.Fatalf("%s sealed with key %s, want the AWSCURRENT version %s", a.Name, keyOf(sealed), v1)
	}
	v2, err := c.Admin(ctx, "rotate")
	if err != nil {
		t.Fatal(err)
	}
	b2, err := c.Restart(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if b2.SealsWith != v2 {
		t.Fatalf("%s, started after the rotation, seals with %s, want %s", b2.Name, b2.SealsWith, v2)
	}
	if text, rpcErr := retry(t, b2.URL, sealed); rpcErr != nil || text != "state-ok: confirmation received" {
		t.Fatalf("state sealed on %s before the rotation, continued on %s after it: %q %v", a.Name, b2.Name, text, rpcErr)
	}
	sealed2 := firstRound(t, b2.URL)
	if keyOf(sealed2) != v2 {
		t.Fatalf("%s sealed with %s, want the new key %s", b2.Name, keyOf(sealed2), v2)
	}
	// The window of a one-step rotation: a replica that loaded its keys
	// before it meets state sealed with a key it does not know. The unknown
	// key id makes it refresh its keys at once (core.KeyRefresher, which
	// store/secretsmanager implements), so the state verifies.
	if text, rpcErr := retry(t, a.URL, sealed2); rpcErr != nil || text != "state-ok: confirmation received" {
		t.Fatalf("state sealed with the new key on %s, continued on %s (keys loaded before the rotation): %q %v, want it accepted after a forced refresh",
			b2.Name, a.Name, text, rpcErr)
	}

	retired, err := c.Admin(ctx, "retire-previous")
	if err != nil || retired != v1 {
		t.Fatalf("retire-previous: %s %v, want %s", retired, err, v1)
	}
	a2, err := c.Restart(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, rpcErr := retry(t, a2.URL, sealed)
	if rpcErr == nil || rpcErr.Code != -32602 || !strings.Contains(string(rpcErr.Data), "invalid_request_state") {
		t.Fatalf("state sealed with the retired key, continued on %s (loaded after the retirement): %+v, want -32602 invalid_request_state", a2.Name, rpcErr)
	}
	if text, rpcErr := retry(t, a2.URL, sealed2); rpcErr != nil || text != "state-ok: confirmation received" {
		t.Fatalf("state sealed with the new key on %s, continued on %s: %q %v", b2.Name, a2.Name, text, rpcErr)
	}
}

type counterClient struct {
	*mcptest.Client
}

// add calls test_session_counter and returns the counter it reports.
func (c counterClient) add(ctx context.Context, n int) (int, *mcptest.Response, error) {
	res, err := c.LegacyCall(ctx, "tools/call", map[string]any{"name": "test_session_counter", "arguments": map[string]any{"add": n}}, nil)
	if err != nil {
		return 0, res, err
	}
	if res.Status != http.StatusOK || res.Error != nil {
		return 0, res, fmt.Errorf("HTTP %d, error %v", res.Status, res.Error)
	}
	// A legacy result carries the number as text (2025-11-25 allows only
	// objects as structuredContent).
	var out struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	var v int
	if err := json.Unmarshal(res.Result, &out); err != nil || out.IsError || len(out.Content) != 1 {
		return 0, res, fmt.Errorf("result %s (%v)", res.Result, err)
	}
	if _, err := fmt.Sscan(out.Content[0].Text, &v); err != nil {
		return 0, res, fmt.Errorf("result %s: %v", res.Result, err)
	}
	return v, res, nil
}

// TestRestartLosesNoSession initializes a legacy session through replica
// A, restarts A, and continues the session through B and the new A.
func TestRestartLosesNoSession(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2)
	ctx := t.Context()
	a, b := c.Replica(0), c.Replica(1)
	cl := counterClient{&mcptest.Client{URL: a.URL}}
	if _, err := cl.Initialize(ctx, "2025-11-25", nil); err != nil {
		t.Fatal(err)
	}
	id := cl.SessionID
	if v, _, err := cl.add(ctx, 5); err != nil || v != 5 {
		t.Fatalf("on %s: counter %d, %v; want 5", a.Name, v, err)
	}
	a2, err := c.Restart(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	cl.URL = b.URL
	if v, res, err := cl.add(ctx, 1); err != nil || v != 6 || res.Header.Get("Mcp-Session-Id") != id {
		t.Fatalf("on %s after %s restarted: counter %d, %v; want 6 in session %s", b.Name, a.Name, v, err, id)
	}
	cl.URL = a2.URL
	if v, _, err := cl.add(ctx, 1); err != nil || v != 7 {
		t.Fatalf("on the new %s: counter %d, %v; want 7", a2.Name, v, err)
	}
	res, err := cl.LegacyCall(ctx, "tools/list", nil, nil)
	if err != nil || res.Status != http.StatusOK || res.Error != nil || !strings.Contains(string(res.Result), "test_session_counter") {
		t.Fatalf("tools/list on %s: %v %+v", a2.Name, err, res)
	}
}

// TestKillMidRequests hammers test_session_counter in one legacy session
// from several clients through the proxy, kills a replica with SIGKILL
// while it serves some of those requests, and checks that no acknowledged
// update is lost. Clients retry a request that failed in transport (the
// proxy answers 502, or the response is cut off); such a request may or
// may not have updated the session before the replica died, so the final
// counter must lie between the sum of acknowledged adds and that sum plus
// the adds of every attempt whose outcome the client never learnt.
func TestKillMidRequests(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow")
	}
	c := newCluster(t, 3)
	ctx := t.Context()
	hc := &http.Client{Timeout: 20 * time.Second}
	first := counterClient{&mcptest.Client{URL: c.URL, HTTP: hc}}
	if _, err := first.Initialize(ctx, "2025-11-25", nil); err != nil {
		t.Fatal(err)
	}

	// A request known to be in flight when the kill lands: a legacy call
	// that asks for input, whose answer the client withholds until after
	// the kill. Started before the hammering clients, it is the only
	// request in flight, so the replica serving it is the one to kill.
	pinned := &mcptest.Client{URL: c.URL, HTTP: &http.Client{}}
	if _, err := pinned.Initialize(ctx, "2025-11-25", map[string]any{"elicitation": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	asked, killed := make(chan struct{}), make(chan struct{})
	type outcome struct {
		res *mcptest.Response
		err error
	}
	pinnedDone := make(chan outcome, 1)
	go func() {
		res, err := pinned.LegacyCall(ctx, "tools/call", map[string]any{"name": "test_elicitation", "arguments": map[string]any{"message": "Hold on"}},
			func(method string, params json.RawMessage) (any, error) {
				close(asked)
				<-killed
				return map[string]any{"action": "decline"}, nil
			})
		pinnedDone <- outcome{res, err}
	}()
	select {
	case <-asked:
	case <-time.After(20 * time.Second):
		t.Fatal("the pinned call never asked for input")
	}
	victimSlot := -1
	for slot := range 3 {
		if c.Proxy.InFlight(c.Replica(slot).Name) == 1 {
			victimSlot = slot
		}
	}
	if victimSlot < 0 {
		t.Fatal("no replica serves the pinned call")
	}
	victim := c.Replica(victimSlot)

	const clients = 6
	var (
		mu        sync.Mutex
		ackedSum  int
		acked     int
		values    = map[int]int{} // counter value acknowledged -> times
		unknown   int             // attempts whose outcome the client never learnt
		unknownSm int             // the sum of the adds of every attempt not acknowledged
		lostSm    int             // the sum of the adds of the attempts failed in transport
		rejected  int             // attempts answered with an error (not applied)
		failures  []string
		progress  = make(chan struct{}, 1) // signalled on every acknowledged update
	)
	// waitAcked waits until at least n updates are acknowledged.
	waitAcked := func(n int, what string) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			mu.Lock()
			got := acked
			mu.Unlock()
			if got >= n {
				return
			}
			select {
			case <-progress:
			case <-timeout:
				t.Fatalf("%s: %d acknowledged updates, want %d", what, got, n)
			}
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			cl := counterClient{&mcptest.Client{URL: c.URL, HTTP: hc, SessionID: first.SessionID, Version: first.Version}}
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := 1 + rng.IntN(9)
				for attempt := 0; ; attempt++ {
					v, res, err := cl.add(ctx, n)
					mu.Lock()
					switch {
					case err == nil:
						acked++
						ackedSum += n
						values[v]++
						select {
						case progress <- struct{}{}:
						default:
						}
					case res != nil && res.Error != nil:
						rejected++ // a JSON-RPC error: the update was not applied
						unknownSm += n
						failures = append(failures, fmt.Sprintf("add %d: %v", n, res.Error))
					default:
						unknown++
						unknownSm += n
						lostSm += n
						failures = append(failures, fmt.Sprintf("add %d: %v", n, err))
					}
					mu.Unlock()
					if err == nil || attempt >= 20 || ctx.Err() != nil {
						break
					}
					time.Sleep(20 * time.Millisecond) // the client's back-off before it retries
				}
			}
		})
	}

	// Let the clients run, then kill the victim while it serves the pinned
	// call (and whatever else it serves at that moment).
	waitAcked(100, "before the kill")
	inflight := c.Proxy.InFlight(victim.Name)
	if inflight < 1 {
		t.Fatalf("%s serves %d requests, want at least the pinned call", victim.Name, inflight)
	}
	if err := c.StopReplica(ctx, victimSlot, false); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	mu.Lock()
	ackedAtKill := acked
	mu.Unlock()
	close(killed)
	select {
	case o := <-pinnedDone:
		if o.err == nil {
			t.Errorf("the pinned call, in flight on the killed %s, did not fail in transport: %s", victim.Name, o.res.Messages)
		} else {
			t.Logf("the pinned call on %s failed as its replica died: %v", victim.Name, o.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the pinned call did not end after its replica was killed")
	}
	// The clients go on through the survivors; then the platform replaces
	// the victim and the clients reach the new replica too.
	waitAcked(ackedAtKill+100, "after the kill")
	fresh, err := c.StartReplica(ctx, victimSlot)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	if err := c.Proxy.WaitRecords(wctx, func(recs []proxy.Record) bool {
		n := 0
		for _, r := range recs {
			if r.Replica == fresh.Name && r.Err == "" && r.Status == http.StatusOK {
				n++
			}
		}
		return n >= 10
	}); err != nil {
		t.Errorf("the replacement %s served fewer than 10 requests: %v", fresh.Name, err)
	}
	cancel()
	close(stop)
	wg.Wait()

	final, _, err := first.add(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var onVictim, cut int
	for _, r := range c.Proxy.Records() {
		if r.Replica == victim.Name && r.Err != "" {
			cut++
		}
		if r.Replica == victim.Name {
			onVictim++
		}
	}
	t.Logf("%d clients, one session; %s killed with %d requests in flight at %s; %d requests reached it, %d of them failed in transport",
		clients, victim.Name, inflight, killedAt.Format("15:04:05.000"), onVictim, cut)
	t.Logf("acknowledged: %d updates, sum %d; outcome unknown: %d attempts; answered with an error: %d; sum of their adds %d",
		acked, ackedSum, unknown, rejected, unknownSm)
	t.Logf("final counter %d = acknowledged sum %d + %d from attempts whose response was lost (at most %d; %d counting the error answers too)",
		final, ackedSum, final-ackedSum, lostSm, unknownSm)
	for _, f := range failures[:min(len(failures), 10)] {
		t.Logf("  failed attempt: %s", f)
	}
	if rejected > 0 {
		// Why the replicas answered with errors: their log.
		b, _ := os.ReadFile(filepath.Join(c.cfg.Work, "cluster.log"))
		var errs []string
		for line := range strings.SplitSeq(string(b), "\n") {
			if strings.Contains(line, "level=ERROR") || strings.Contains(line, "level=WARN") {
				errs = append(errs, line)
			}
		}
		t.Logf("%d error and warning lines in the replicas' logs; the first ones:\n%s", len(errs), strings.Join(errs[:min(len(errs), 5)], "\n"))
	}
	for v, times := range values {
		if times > 1 {
			t.Errorf("%d acknowledged updates returned the same counter %d: an update was lost", times, v)
		}
	}
	if final < ackedSum {
		t.Errorf("final counter %d < sum of acknowledged adds %d: acknowledged updates were lost", final, ackedSum)
	}
	if final > ackedSum+unknownSm {
		t.Errorf("final counter %d > %d + %d: updates were applied that no client sent", final, ackedSum, unknownSm)
	}
	if acked < 50 {
		t.Errorf("only %d acknowledged updates: the clients did not hammer", acked)
	}
}

// TestBridgeAnswerOnAnotherReplica has a legacy client call tools that ask
// it for input (elicitation, sampling) through the proxy: the server's
// request arrives on the call's SSE stream from one replica, and the
// client's answer, POSTed while that stream is open, reaches another
// replica (the proxy's round robin), which hands it over through the
// session store.
func TestBridgeAnswerOnAnotherReplica(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 3)
	ctx := t.Context()
	cl := &mcptest.Client{URL: c.URL}
	if _, err := cl.Initialize(ctx, "2025-11-25", map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	answer := func(method string, params json.RawMessage) (any, error) {
		switch method {
		case "elicitation/create":
			return map[string]any{"action": "accept", "content": map[string]any{"username": "ada", "email": "ada@example.com"}}, nil
		case "sampling/createMessage":
			return map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Paris"}, "model": "m"}, nil
		}
		return nil, errors.New("unexpected " + method)
	}
	calls := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"test_elicitation", map[string]any{"message": "Who are you?"}, `User response: action=accept, content={"email":"ada@example.com","username":"ada"}`},
		{"test_sampling", map[string]any{"prompt": "Capital of France?"}, "LLM response: Paris"},
		{"test_elicitation", map[string]any{"message": "Again?"}, "User response: action=accept"},
	}
	for _, call := range calls {
		id := fmt.Sprint(cl.NextID() + 1) // the id LegacyCall will use
		res, err := cl.LegacyCall(ctx, "tools/call", map[string]any{"name": call.tool, "arguments": call.args}, answer)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if res.Error != nil || json.Unmarshal(res.Result, &out) != nil || len(out.Content) != 1 ||
			!strings.HasPrefix(out.Content[0].Text, call.want) || len(res.ServerRequests) != 1 {
			t.Fatalf("%s: %s %v (%d server requests)", call.tool, res.Result, res.Error, len(res.ServerRequests))
		}
		var req struct {
			ID string `json:"id"`
		}
		json.Unmarshal(res.ServerRequests[0], &req)
		var callRec, ansRec *proxy.Record
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		c.Proxy.WaitRecords(wctx, func(recs []proxy.Record) bool {
			for i := range recs {
				r := recs[i]
				if r.Kind == "request" && r.RPCMethod == "tools/call" && r.Session == cl.SessionID && r.RPCID == id {
					callRec = &r
				}
				if r.Kind == "response" && r.RPCID == `"`+req.ID+`"` {
					ansRec = &r
				}
			}
			return callRec != nil && ansRec != nil
		})
		cancel()
		if callRec == nil || ansRec == nil {
			t.Fatalf("%s: the proxy recorded no call (%v) or no answer (%v) for server request %s", call.tool, callRec, ansRec, req.ID)
		}
		if callRec.Replica == ansRec.Replica {
			t.Errorf("%s: the call and the answer both went to %s", call.tool, callRec.Replica)
		}
		if !ansRec.Start.Before(callRec.Start.Add(callRec.Duration)) || ansRec.Status != http.StatusAccepted {
			t.Errorf("%s: the answer (HTTP %d) was not posted while the call's stream was open", call.tool, ansRec.Status)
		}
		t.Logf("%s: call #%d on %s (stream open %v), answer #%d to %s on %s, HTTP %d",
			call.tool, callRec.Seq, callRec.Replica, callRec.Duration.Round(time.Millisecond), ansRec.Seq, req.ID, ansRec.Replica, ansRec.Status)
	}
}

// TestClusterLogNamesReplicas checks that the proxy's log says which
// replica served each request (the debugging aid of the conformance runs).
func TestClusterLogNamesReplicas(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2)
	cl := &mcptest.Client{URL: c.URL}
	for range 4 {
		if res, err := cl.Call(t.Context(), "tools/list", nil, nil); err != nil || res.Error != nil {
			t.Fatal(err, res)
		}
	}
	c.Close()
	b, err := os.ReadFile(filepath.Join(c.cfg.Work, "cluster.log"))
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "proxy: #") && strings.Contains(line, "request tools/list") {
			_, after, _ := strings.Cut(line, " -> ")
			served[strings.Fields(after)[0]]++
		}
	}
	if served["A1"] != 2 || served["B1"] != 2 {
		t.Errorf("tools/list served by %v, want A1 and B1 twice each", served)
	}
}
