// Command replicas runs the conformance fixture (examples/everything) as a
// fleet of interchangeable instances, as a serverless platform does, to
// show that nothing a client relies on stays inside one process:
//
//   - dynalite (test/dynalite/start.sh, unless MCPFN_DYNAMODB_ENDPOINT names
//     a running one) with a fresh session table (store/dynamo);
//   - smfake (store/secretsmanager/internal/smfake/cmd/smfake), Secrets Manager on loopback, holding
//     the secret of the keys that seal requestState (store/secretsmanager);
//   - -replicas processes of examples/everything on net/http, configured
//     only by the environment (MCPFN_DYNAMODB_TABLE: the legacy sessions and
//     the tasks of the Tasks extension; AWS_ENDPOINT_URL_DYNAMODB,
//     MCPFN_KEYS_SECRET_ID, AWS_ENDPOINT_URL_SECRETS_MANAGER, dummy
//     credentials, AWS_REGION: see deploy/lambdaenv);
//   - the round-robin proxy of test/replicas/proxy in front of them, which
//     sends consecutive requests of a client to different replicas.
//
// It prints "replicas: serving MCP on URL" (the proxy) and runs until SIGINT
// or SIGTERM, then stops every process it started. Every process's output,
// and the proxy's line per request naming the replica that served it, go to
// stderr.
//
// Meanwhile a chaos loop performs rolling restarts: every -restart-every it
// drains the next replica (no new requests; those in flight finish), stops
// it with SIGTERM (the fixture shuts down gracefully, letting the tasks it
// runs finish for -task-grace), starts a new process in its place and
// routes to it once healthy. At -rotate-at it rotates the
// signing key once through smfake's admin endpoint:
//
//	-rotation two-step  (default) the new key was staged AWSPENDING before the replicas
//	                    started, and is now promoted to AWSCURRENT (the old key becomes
//	                    AWSPREVIOUS): replicas started before sign with the old key and
//	                    verify the new one, replicas started after sign with the new key
//	                    and verify the old one. This is the procedure store/secretsmanager
//	                    documents to have no window in which state fails to open.
//	-rotation one-step  put a new AWSCURRENT at -rotate-at: replicas that have not
//	                    refreshed their keys (RefreshInterval, 5 minutes, or a restart)
//	                    reject state sealed with the new key by those that have.
//
//	go run ./test/replicas                                   # until ^C
//	go build -o /tmp/replicas ./test/replicas && /tmp/replicas -restart-every 3s
//
// The Go tests in this directory (go test ./test/replicas/, under
// test/dynalite/with.sh) use the same cluster; see README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("replicas", 3, "number of replicas")
	work := flag.String("work", "", "directory for binaries and state (default: a temporary directory, removed at exit)")
	everything := flag.String("everything", "", "prebuilt examples/everything binary (default: build it)")
	smfake := flag.String("smfake", "", "prebuilt store/secretsmanager/internal/smfake/cmd/smfake binary (default: build it)")
	every := flag.Duration("restart-every", 15*time.Second, "rolling restart period: one replica per period (0: none)")
	first := flag.Duration("first-restart", 0, "delay of the first restart (default: -restart-every)")
	rotation := flag.String("rotation", "two-step", "key rotation: two-step, one-step or none")
	rotateAt := flag.Duration("rotate-at", 10*time.Second, "when to rotate the key, after the cluster serves")
	level := flag.String("log", "info", "replicas' log level (MCPFN_LOG_LEVEL)")
	taskGrace := flag.Duration("task-grace", 8*time.Second, "replicas' -task-grace: how long a stopping replica lets its tasks finish (below the 15s a stop waits after SIGTERM)")
	taskLease := flag.Duration("task-lease", 0, "replicas' -task-lease (0: core's default)")
	flag.Parse()
	var replicaArgs []string
	if *taskGrace > 0 {
		replicaArgs = append(replicaArgs, "-task-grace", taskGrace.String())
	}
	if *taskLease > 0 {
		replicaArgs = append(replicaArgs, "-task-lease", taskLease.String())
	}
	if err := run(*n, *work, *everything, *smfake, *every, *first, *rotation, *rotateAt, *level, replicaArgs); err != nil {
		fmt.Fprintln(os.Stderr, "replicas:", err)
		os.Exit(1)
	}
}

func run(n int, work, everything, smfake string, every, first time.Duration, rotation string, rotateAt time.Duration, level string, replicaArgs []string) error {
	switch rotation {
	case "two-step", "one-step", "none":
	default:
		return fmt.Errorf("unknown -rotation %q", rotation)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if work == "" {
		dir, err := os.MkdirTemp("", "mcpfn-replicas-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		work = dir
	}
	c, err := StartCluster(ctx, Config{Work: work, Everything: everything, SMFake: smfake, Replicas: n,
		DynamoEndpoint: os.Getenv("MCPFN_DYNAMODB_ENDPOINT"), LogLevel: level, Log: os.Stderr,
		StagePending: rotation == "two-step", ReplicaArgs: replicaArgs})
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Printf("replicas: serving MCP on %s (%d replicas, table %s, secret %s at %s)\n", c.URL, n, c.Table, SecretName, c.SMURL)
	go c.Serve(ctx)
	if first <= 0 {
		first = every
	}
	chaos(ctx, c, n, every, first, rotation, rotateAt)
	c.logf("stopping: %d restarts, %d kills; requests per replica %v", c.restarts, c.kills, c.Proxy.Served())
	c.logf("requestState: %s", c.StateSummary())
	return nil
}

// chaos restarts one replica per period, in slot order, and rotates the
// key once, until ctx ends.
func chaos(ctx context.Context, c *Cluster, n int, every, first time.Duration, rotation string, rotateAt time.Duration) {
	var restart, rotate <-chan time.Time
	if every > 0 {
		restart = time.After(first)
	}
	if rotation != "none" {
		rotate = time.After(rotateAt)
	}
	// run.sh copies the log when a suite ends, before it stops the
	// cluster: report the requestState tally as it changes.
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		last := ""
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if s := c.StateSummary(); s != last {
				c.logf("requestState so far: %s", s)
				last = s
			}
		}
	}()
	slot := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-restart:
			if _, err := c.Restart(ctx, slot); err != nil {
				if ctx.Err() != nil {
					return
				}
				c.logf("restart of slot %c failed: %v", 'A'+slot, err)
			}
			slot = (slot + 1) % n
			restart = time.After(every)
		case <-rotate:
			rotate = nil
			op := "promote"
			if rotation == "one-step" {
				op = "rotate"
			}
			if id, err := c.Admin(ctx, op); err != nil {
				c.logf("key rotation failed: %v", err)
			} else {
				c.logf("rotated the signing key: %s is AWSCURRENT; replicas started from now on sign with it", id)
			}
		}
	}
}
