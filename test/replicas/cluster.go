package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/test/internal/dynalite"
	"github.com/mcpfn/mcpfn/test/internal/httpjson"
	"github.com/mcpfn/mcpfn/test/internal/repo"
	"github.com/mcpfn/mcpfn/test/replicas/proxy"
	"github.com/mcpfn/mcpfn/test/replicas/storeproxy"
)

// SecretName is the Secrets Manager secret holding the signing keys.
const SecretName = "mcpfn/state-keys"

// Config describes a cluster.
type Config struct {
	// Root is the module's root directory; "" means found from the working
	// directory.
	Root string
	// Work holds the binaries, smfake's state file and dynalite's state;
	// it must exist.
	Work string
	// Everything and SMFake are prebuilt binaries of examples/everything
	// and store/secretsmanager/internal/smfake/cmd/smfake; "" means build them into Work.
	Everything, SMFake string
	// Replicas is the number of replicas (slots A, B, C, ...).
	Replicas int
	// DynamoEndpoint is a running DynamoDB-compatible endpoint; "" means
	// start dynalite (test/dynalite/start.sh).
	DynamoEndpoint string
	// LogLevel is the replicas' MCPFN_LOG_LEVEL.
	LogLevel string
	// Log receives every line of every process, prefixed with its name, and
	// the proxy's and the cluster's own lines.
	Log io.Writer
	// StagePending stages a second key as AWSPENDING before the replicas
	// start (the first step of a two-step rotation; Promote is the second).
	StagePending bool
	// ReplicaArgs are extra flags of every replica (examples/everything),
	// e.g. -task-lease 2s.
	ReplicaArgs []string
	// ReplicaEnv are extra environment variables of every replica
	// ("NAME=value").
	ReplicaEnv []string
	// StoreProxy puts a storeproxy between the replicas and DynamoDB
	// (Cluster.Store), so that a test can count the replicas' store calls
	// and cut the store off.
	StoreProxy bool
}

// Cluster is dynalite, a session table, smfake, the replicas of
// examples/everything and the proxy in front of them.
type Cluster struct {
	cfg   Config
	log   *mcptest.LockedWriter
	Proxy *proxy.Proxy
	// URL is the proxy's MCP endpoint.
	URL string
	// SMURL is smfake's URL; Table and Endpoint name the session table.
	SMURL, Table, Endpoint string
	// Store is the proxy between the replicas and DynamoDB, when
	// Config.StoreProxy asked for one.
	Store   *storeproxy.Proxy
	started time.Time
	hs      *http.Server

	mu       sync.Mutex
	procs    []*proc // dynalite, smfake
	slots    []*Replica
	gens     []int
	restarts int
	kills    int
	sealers  map[string]string // replica name -> key it seals with
}

// Replica is one process of examples/everything.
type Replica struct {
	Name string // slot letter and generation: A1, A2, ...
	Slot int
	URL  string // its own MCP endpoint
	// Started is when it began serving.
	Started time.Time
	// SealsWith is the id of the key it seals requestState with: its
	// AWSCURRENT version when it loaded the secret, at its warm-up.
	SealsWith string
	p         *proc
}

// StartCluster builds what it needs and starts everything; Close stops it.
func StartCluster(ctx context.Context, cfg Config) (_ *Cluster, err error) {
	if cfg.Replicas <= 0 {
		cfg.Replicas = 3
	}
	if cfg.LogLevel == "" {
		cfg.LogLevel = "info"
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.Root == "" {
		if cfg.Root, err = repo.FindRoot(); err != nil {
			return nil, err
		}
	}
	c := &Cluster{cfg: cfg, log: &mcptest.LockedWriter{W: cfg.Log}, slots: make([]*Replica, cfg.Replicas), gens: make([]int, cfg.Replicas),
		sealers: map[string]string{}}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	if err := c.build(ctx); err != nil {
		return nil, err
	}

	// DynamoDB: the given endpoint, or a private dynalite.
	c.Endpoint = cfg.DynamoEndpoint
	if c.Endpoint == "" {
		state := filepath.Join(cfg.Work, "dynalite")
		p, m, err := c.startProc(ctx, "dynalite", filepath.Join(cfg.Root, "test/dynalite/start.sh"), nil,
			append(os.Environ(), "MCPFN_DYNALITE_STATE="+state), regexp.MustCompile(`^export MCPFN_DYNAMODB_ENDPOINT=(\S+)`), 120*time.Second, syscall.SIGTERM)
		if err != nil {
			return nil, err
		}
		c.procs = append(c.procs, p)
		c.Endpoint = m
	}
	if _, c.Table, err = dynalite.NewTable(ctx, c.Endpoint, "replicas-"); err != nil {
		return nil, err
	}
	if cfg.StoreProxy {
		if c.Store, err = storeproxy.New(c.Endpoint); err != nil {
			return nil, err
		}
	}

	// Secrets Manager.
	p, m, err := c.startProc(ctx, "smfake", c.cfg.SMFake, []string{"-addr", "127.0.0.1:0",
		"-state", filepath.Join(cfg.Work, "smfake.json"), "-secret", SecretName}, nil,
		regexp.MustCompile(`serving Secrets Manager on (http://\S+)`), 30*time.Second, syscall.SIGKILL)
	if err != nil {
		return nil, err
	}
	c.procs = append(c.procs, p)
	c.SMURL = m
	if cfg.StagePending {
		id, err := c.Admin(ctx, "rotate?stage=AWSPENDING")
		if err != nil {
			return nil, err
		}
		c.logf("rotation step 1: staged version %s as AWSPENDING (every replica starts after it, so all verify it)", id)
	}

	// The proxy, then the replicas.
	c.Proxy = proxy.New(&proxy.Options{Log: c.log, HealthInterval: 250 * time.Millisecond})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c.hs = &http.Server{Handler: c.Proxy, ReadHeaderTimeout: 10 * time.Second}
	go c.hs.Serve(ln)
	c.URL = "http://" + ln.Addr().String() + "/mcp"
	errs := make([]error, cfg.Replicas)
	var wg sync.WaitGroup
	for i := range cfg.Replicas {
		wg.Go(func() { _, errs[i] = c.StartReplica(ctx, i) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	c.started = time.Now()
	return c, nil
}

// Serve runs the proxy's health checks until ctx ends.
func (c *Cluster) Serve(ctx context.Context) { c.Proxy.Run(ctx) }

func (c *Cluster) build(ctx context.Context) error {
	var pkgs []string
	if c.cfg.Everything == "" {
		c.cfg.Everything = filepath.Join(c.cfg.Work, "everything")
		pkgs = append(pkgs, "./examples/everything")
	}
	if c.cfg.SMFake == "" {
		c.cfg.SMFake = filepath.Join(c.cfg.Work, "smfake")
		pkgs = append(pkgs, "./store/secretsmanager/internal/smfake/cmd/smfake")
	}
	if len(pkgs) == 0 {
		return nil
	}
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-o", c.cfg.Work + "/"}, pkgs...)...)
	cmd.Dir = c.cfg.Root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %v: %v\n%s", pkgs, err, out)
	}
	return nil
}

// replicaEnv is the environment of a replica: the deployment's variables
// (deploy/lambdaenv), with dummy credentials dynalite and smfake
// accept, and nothing of the caller's AWS or MCPFN configuration.
func (c *Cluster) replicaEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "MCPFN_") {
			env = append(env, kv)
		}
	}
	endpoint := c.Endpoint
	if c.Store != nil {
		endpoint = c.Store.URL
	}
	env = append(env, c.cfg.ReplicaEnv...)
	return append(env,
		"MCPFN_DYNAMODB_TABLE="+c.Table,
		"AWS_ENDPOINT_URL_DYNAMODB="+endpoint,
		"MCPFN_KEYS_SECRET_ID="+SecretName,
		"AWS_ENDPOINT_URL_SECRETS_MANAGER="+c.SMURL,
		"AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=local",
		"AWS_SECRET_ACCESS_KEY=local",
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE="+os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE="+os.DevNull,
		"MCPFN_LOG_LEVEL="+c.cfg.LogLevel,
	)
}

// StartReplica starts a new process in slot and routes requests to it once
// it is healthy.
func (c *Cluster) StartReplica(ctx context.Context, slot int) (*Replica, error) {
	c.mu.Lock()
	c.gens[slot]++
	name := fmt.Sprintf("%c%d", 'A'+slot, c.gens[slot])
	c.mu.Unlock()
	p, url, err := c.startProc(ctx, name, c.cfg.Everything, append([]string{"-addr", "127.0.0.1:0"}, c.cfg.ReplicaArgs...), c.replicaEnv(),
		regexp.MustCompile(`serving MCP on (http://\S+)`), 30*time.Second, syscall.SIGKILL)
	if err != nil {
		return nil, err
	}
	r := &Replica{Name: name, Slot: slot, URL: url, p: p}
	actx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// Warm up: the replica loads its keys at the first seal (and keeps
	// them RefreshInterval, 5 minutes), as an instance does at its first
	// request; from then on it seals with the key then AWSCURRENT.
	if r.SealsWith, err = warmUp(actx, url); err != nil {
		p.stop(syscall.SIGKILL, 0)
		return nil, fmt.Errorf("warming up %s: %w", name, err)
	}
	if err := c.Proxy.Add(actx, name, url); err != nil {
		p.stop(syscall.SIGKILL, 0)
		return nil, err
	}
	r.Started = time.Now()
	c.mu.Lock()
	c.slots[slot] = r
	c.mu.Unlock()
	c.logf("replica %s serving on %s, sealing with key %s", name, url, r.SealsWith)
	c.mu.Lock()
	c.sealers[name] = r.SealsWith
	c.mu.Unlock()
	return r, nil
}

// Replica returns the replica now in slot (nil while it is restarting).
func (c *Cluster) Replica(slot int) *Replica {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slots[slot]
}

// StopReplica takes slot's replica out of the proxy: gracefully (drain,
// then SIGTERM: the fixture closes its streams and shuts down) or by
// SIGKILL with requests in flight.
func (c *Cluster) StopReplica(ctx context.Context, slot int, graceful bool) error {
	c.mu.Lock()
	r := c.slots[slot]
	c.slots[slot] = nil
	if !graceful {
		c.kills++
	}
	c.mu.Unlock()
	if r == nil {
		return fmt.Errorf("slot %d has no replica", slot)
	}
	if !graceful {
		c.logf("killing %s (SIGKILL)", r.Name)
		r.p.stop(syscall.SIGKILL, 0)
		c.Proxy.Remove(r.Name)
		return nil
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	left, _ := c.Proxy.Drain(dctx, r.Name)
	cancel()
	if left > 0 {
		c.logf("%s: %d requests still in flight after 10s of draining", r.Name, left)
	}
	err := r.p.stop(syscall.SIGTERM, 15*time.Second)
	c.Proxy.Remove(r.Name)
	c.logf("stopped %s (%v)", r.Name, err)
	return nil
}

// Signal sends sig to slot's replica (SIGUSR1 makes examples/everything
// publish an update of its watched resource).
func (c *Cluster) Signal(slot int, sig syscall.Signal) error {
	r := c.Replica(slot)
	if r == nil {
		return fmt.Errorf("slot %d has no replica", slot)
	}
	return r.p.cmd.Process.Signal(sig)
}

// Restart replaces slot's replica with a new process: a rolling restart's
// step.
func (c *Cluster) Restart(ctx context.Context, slot int) (*Replica, error) {
	old := c.Replica(slot)
	if err := c.StopReplica(ctx, slot, true); err != nil {
		return nil, err
	}
	r, err := c.StartReplica(ctx, slot)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.restarts++
	c.mu.Unlock()
	c.logf("restarted slot %c: %s -> %s", 'A'+slot, old.Name, r.Name)
	return r, nil
}

// Admin calls smfake's admin endpoint op ("rotate", "promote",
// "retire-previous", "rotate?stage=AWSPENDING") and returns the version
// concerned.
func (c *Cluster) Admin(ctx context.Context, op string) (string, error) {
	var out struct {
		VersionID string              `json:"versionId"`
		Versions  map[string][]string `json:"versions"`
		Error     string              `json:"error"`
	}
	status, err := httpjson.Post(ctx, c.SMURL+"/_admin/"+op, nil, &out)
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		return "", fmt.Errorf("smfake %s: %s", op, out.Error)
	}
	c.logf("smfake %s: version %s; stages now %v", op, out.VersionID, out.Versions)
	return out.VersionID, nil
}

// Close stops the proxy, the replicas, smfake and dynalite, and waits for
// every process to exit.
func (c *Cluster) Close() {
	if c.hs != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c.hs.Shutdown(ctx)
		cancel()
		c.hs.Close()
	}
	c.mu.Lock()
	slots := append([]*Replica(nil), c.slots...)
	clear(c.slots)
	procs := c.procs
	c.procs = nil
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, r := range slots {
		if r != nil {
			wg.Go(func() { r.p.stop(syscall.SIGTERM, 15*time.Second) })
		}
	}
	wg.Wait()
	if c.Store != nil {
		c.Store.Close()
	}
	for i := len(procs) - 1; i >= 0; i-- {
		procs[i].stop(syscall.SIGTERM, 10*time.Second)
	}
}

func (c *Cluster) logf(format string, args ...any) {
	at := ""
	if !c.started.IsZero() {
		at = fmt.Sprintf(" +%.1fs", time.Since(c.started).Seconds())
	}
	fmt.Fprintf(c.log, "cluster"+at+": "+format+"\n", args...)
}

// proc is a child process whose output goes to the cluster's log.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited and its output is read
	err  error
}

// startProc starts path, copies its output to the log prefixed with name,
// and waits until a line of its stdout matches ready; it returns the first
// submatch. deathSig reaches the child if the cluster dies.
func (c *Cluster) startProc(ctx context.Context, name, path string, args, env []string, ready *regexp.Regexp,
	timeout time.Duration, deathSig syscall.Signal) (*proc, string, error) {
	cmd := exec.Command(path, args...)
	cmd.Dir = c.cfg.Root
	cmd.Env = env // nil: the cluster's own
	setDeathSignal(cmd, deathSig)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	found := make(chan string, 1)
	var wg sync.WaitGroup
	copyLines := func(r io.Reader, match bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintf(c.log, "[%s] %s\n", name, line)
			if match {
				if m := ready.FindStringSubmatch(line); m != nil {
					select {
					case found <- m[1]:
					default:
					}
				}
			}
		}
		io.Copy(io.Discard, r)
	}
	wg.Go(func() { copyLines(stdout, true) })
	wg.Go(func() { copyLines(stderr, false) })
	go func() {
		wg.Wait()
		p.err = cmd.Wait()
		close(p.done)
	}()
	select {
	case m := <-found:
		return p, m, nil
	case <-p.done:
		return nil, "", fmt.Errorf("%s exited before it was ready: %v", name, p.err)
	case <-time.After(timeout):
	case <-ctx.Done():
	}
	p.stop(syscall.SIGKILL, 0)
	return nil, "", fmt.Errorf("%s was not ready in %v", name, timeout)
}

// stop sends sig and waits for the process to exit, up to timeout, after
// which it is killed.
func (p *proc) stop(sig syscall.Signal, timeout time.Duration) error {
	select {
	case <-p.done:
		return p.err
	default:
	}
	p.cmd.Process.Signal(sig)
	if sig != syscall.SIGKILL {
		select {
		case <-p.done:
			return p.err
		case <-time.After(timeout):
			p.cmd.Process.Kill()
		}
	}
	<-p.done
	return p.err
}

// StateSummary tells, from the proxy's records, how 2026-07-28 retries
// fared whose requestState was sealed with another key than the one the
// replica serving the retry seals with (learned from the states each
// replica sealed): such a retry opened only because both keys were staged
// in the secret.
func (c *Cluster) StateSummary() string {
	recs := c.Proxy.Records()
	seals := map[string]map[string]bool{} // replica -> keys it sealed with
	c.mu.Lock()
	for name, k := range c.sealers {
		seals[name] = map[string]bool{k: true}
	}
	c.mu.Unlock()
	for _, r := range recs {
		if r.SealedKey != "" {
			if seals[r.Replica] == nil {
				seals[r.Replica] = map[string]bool{}
			}
			seals[r.Replica][r.SealedKey] = true
		}
	}
	var retries, cross, crossOK, rejected int
	keys := map[string]int{}
	for _, r := range recs {
		if r.StateKey == "" {
			continue
		}
		retries++
		keys[r.StateKey]++
		if r.RPCError == -32602 {
			rejected++
		}
		if s := seals[r.Replica]; len(s) > 0 && !s[r.StateKey] {
			cross++
			if r.RPCError == 0 {
				crossOK++
			}
		}
	}
	return fmt.Sprintf("%d retries carried requestState (by sealing key: %v); %d reached a replica sealing with another key, "+
		"%d of which completed without error; %d were rejected with -32602", retries, keys, cross, crossOK, rejected)
}

// warmUp sends a replica the first round of a 2026-07-28 call that asks for
// input, and returns the id of the key that sealed the state it answers.
func warmUp(ctx context.Context, url string) (string, error) {
	res, err := (&mcptest.Client{URL: url, Caps: map[string]any{"elicitation": map[string]any{}}}).Call(ctx, "tools/call",
		map[string]any{"name": "test_input_required_result_request_state", "arguments": map[string]any{}}, nil)
	if err != nil {
		return "", err
	}
	var out struct {
		RequestState string `json:"requestState"`
	}
	if err := res.Decode(&out); err != nil {
		return "", err
	}
	parts := strings.Split(out.RequestState, ".")
	if len(parts) != 4 {
		return "", fmt.Errorf("no sealed requestState in %s", res.Result)
	}
	return parts[1], nil
}
