package secretsmanager_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/store/secretsmanager"
)

const secretName = "mcpfn/state-keys"

// newVersionID returns a UUID, as Secrets Manager assigns.
func newVersionID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// newValue returns a SecretString and its key.
func newValue(t *testing.T) (string, []byte) {
	s := secretsmanager.NewSecretString()
	v, err := secretsmanager.ParseSecretString(s)
	if err != nil {
		t.Fatal(err)
	}
	return s, v.Key
}

// newVersion returns a new version of the secret: its id, its
// SecretString and the key that holds.
func newVersion(t *testing.T) (id, value string, key []byte) {
	t.Helper()
	value, key = newValue(t)
	return newVersionID(), value, key
}

// newKeys returns Keys on srv refreshing every minute, retrying after 10s.
// The tests of the schedule run in a testing/synctest bubble, whose clock
// the Keys read.
func newKeys(t *testing.T, srv *smServer, logs *mcptest.LogBuffer) *secretsmanager.Keys {
	t.Helper()
	opts := &secretsmanager.Options{RefreshInterval: time.Minute, RetryInterval: 10 * time.Second}
	if logs != nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	k, err := secretsmanager.New(srv.client(), secretName, opts)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// newSecret starts a Secrets Manager fake holding one version of the
// secret and returns it, Keys on it (see newKeys), and the version's id and
// key.
func newSecret(t *testing.T, logs *mcptest.LogBuffer) (*smServer, *secretsmanager.Keys, string, []byte) {
	t.Helper()
	srv := newSMServer(t)
	v1, s1, k1 := newVersion(t)
	srv.put(secretName, v1, s1)
	return srv, newKeys(t, srv, logs), v1, k1
}

func mustKeys(t *testing.T, k *secretsmanager.Keys) []core.Key {
	t.Helper()
	keys, err := k.Keys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// checkKeys compares keys with want, a list of version ids and their keys.
func checkKeys(t *testing.T, keys []core.Key, want ...any) {
	t.Helper()
	if len(keys) != len(want)/2 {
		t.Fatalf("got %d keys %v, want %d", len(keys), keys, len(want)/2)
	}
	for i := range keys {
		id, secret := want[2*i].(string), want[2*i+1].([]byte)
		if keys[i].ID != secretsmanager.KeyID(id) || !bytes.Equal(keys[i].Secret, secret) {
			t.Fatalf("key %d is %q, want the key of version %s", i, keys[i].ID, id)
		}
	}
}

func TestStages(t *testing.T) {
	t.Parallel()
	srv := newSMServer(t)
	prev, cur, pend, old := newVersionID(), newVersionID(), newVersionID(), newVersionID()
	sOld, _ := newValue(t)
	sPrev, kPrev := newValue(t)
	sCur, kCur := newValue(t)
	sPend, kPend := newValue(t)
	srv.put(secretName, old, sOld)
	srv.put(secretName, prev, sPrev)
	srv.put(secretName, cur, sCur) // prev becomes AWSPREVIOUS, old loses its labels
	srv.put(secretName, pend, sPend, "AWSPENDING")
	k := newKeys(t, srv, nil)
	keys := mustKeys(t, k)
	// AWSCURRENT signs (first); AWSPENDING and AWSPREVIOUS verify.
	checkKeys(t, keys, cur, kCur, pend, kPend, prev, kPrev)
	if keys[0].ID != cur {
		t.Errorf("the key id of a UUID version is %q, want the version id", keys[0].ID)
	}
	if got := srv.count("GetSecretValue"); got != 3 {
		t.Errorf("%d GetSecretValue calls, want 3 (one per staged version)", got)
	}

	// By ARN too.
	k2, err := secretsmanager.New(srv.client(), "arn:aws:secretsmanager:us-east-1:123456789012:secret:"+secretName+"-AbCdEf", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkKeys(t, mustKeys(t, k2), cur, kCur, pend, kPend, prev, kPrev)
}

func TestRotation(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv, k, v1, k1 := newSecret(t, nil)
		v2, s2, k2 := newVersion(t)
		v3, s3, k3 := newVersion(t)
		checkKeys(t, mustKeys(t, k), v1, k1)

		srv.put(secretName, v2, s2) // rotation: v2 current, v1 previous
		time.Sleep(59 * time.Second)
		before := srv.count("DescribeSecret") + srv.count("GetSecretValue")
		checkKeys(t, mustKeys(t, k), v1, k1) // not yet refreshed
		if after := srv.count("DescribeSecret") + srv.count("GetSecretValue"); after != before {
			t.Fatalf("%d requests before the refresh interval", after-before)
		}
		time.Sleep(time.Second)
		checkKeys(t, mustKeys(t, k), v2, k2, v1, k1) // the new key signs, the old one verifies
		if n := srv.count("GetSecretValue"); n != 2 {
			t.Errorf("%d GetSecretValue calls in all, want 2 (each version fetched once)", n)
		}

		srv.put(secretName, v3, s3) // v3 current, v2 previous, v1 retired
		time.Sleep(time.Minute)
		checkKeys(t, mustKeys(t, k), v3, k3, v2, k2)
	})
}

func TestTwoStepRotation(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv, k, v1, k1 := newSecret(t, nil)
		v2, s2, k2 := newVersion(t)
		mustKeys(t, k)
		srv.put(secretName, v2, s2, "AWSPENDING")
		time.Sleep(time.Minute)
		checkKeys(t, mustKeys(t, k), v1, k1, v2, k2) // pending verifies, current still signs
		srv.move(secretName, "AWSCURRENT", v2)       // promote; v2 keeps AWSPENDING too
		time.Sleep(time.Minute)
		checkKeys(t, mustKeys(t, k), v2, k2, v1, k1)
	})
}

func TestLazyRefresh(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv, k, _, _ := newSecret(t, nil)
		first := mustKeys(t, k)
		for i := 0; i < 100; i++ {
			time.Sleep(500 * time.Millisecond)
			mustKeys(t, k)
		}
		if d, g := srv.count("DescribeSecret"), srv.count("GetSecretValue"); d != 1 || g != 1 {
			t.Fatalf("%d DescribeSecret and %d GetSecretValue calls within the interval, want 1 and 1", d, g)
		}
		time.Sleep(10 * time.Second) // 60s after the load
		again := mustKeys(t, k)
		if d, g := srv.count("DescribeSecret"), srv.count("GetSecretValue"); d != 2 || g != 1 {
			t.Fatalf("%d DescribeSecret and %d GetSecretValue calls after the interval, want 2 and 1", d, g)
		}
		if &again[0] != &first[0] {
			t.Error("an unchanged key list was replaced by a new slice")
		}
	})
}

func TestConcurrentCallsShareOneRefresh(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv, k, v1, k1 := newSecret(t, nil)
		v2, s2, k2 := newVersion(t)

		// run calls Keys from n goroutines while the DescribeSecret of the
		// refresh is held until all have had time to call.
		run := func(n int, check func([]core.Key, error)) {
			gate, entered := make(chan struct{}), make(chan struct{}, n)
			srv.Hold("DescribeSecret", gate, entered)
			var wg sync.WaitGroup
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					check(k.Keys(context.Background()))
				}()
			}
			<-entered       // a refresh is in flight
			synctest.Wait() // every other caller waits for it
			srv.Hold("DescribeSecret", nil, nil)
			close(gate)
			wg.Wait()
		}

		// The first load: everybody waits for the one refresh.
		run(20, func(keys []core.Key, err error) {
			if err != nil {
				t.Error(err)
				return
			}
			if len(keys) != 1 || !bytes.Equal(keys[0].Secret, k1) {
				t.Errorf("keys %v", keys)
			}
		})
		if d := srv.count("DescribeSecret"); d != 1 {
			t.Fatalf("%d DescribeSecret calls for 20 concurrent first loads, want 1", d)
		}

		// A stale cache: one refreshes; the others get the cached or the new keys.
		srv.put(secretName, v2, s2)
		time.Sleep(time.Minute)
		run(20, func(keys []core.Key, err error) {
			if err != nil {
				t.Error(err)
				return
			}
			if !bytes.Equal(keys[0].Secret, k1) && !bytes.Equal(keys[0].Secret, k2) {
				t.Errorf("keys %v", keys)
			}
		})
		if d := srv.count("DescribeSecret"); d != 2 {
			t.Fatalf("%d DescribeSecret calls after 20 concurrent stale calls, want 2", d)
		}
		checkKeys(t, mustKeys(t, k), v2, k2, v1, k1)
	})
}

func TestUnreachableKeepsCachedKeys(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var logs mcptest.LogBuffer
		srv, k, v1, k1 := newSecret(t, &logs)
		mustKeys(t, k)
		srv.Close()
		time.Sleep(time.Hour)
		checkKeys(t, mustKeys(t, k), v1, k1)
		if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "serving the cached keys") {
			t.Fatalf("no warning logged:\n%s", logs.String())
		}
		// The next attempt waits RetryInterval.
		n := strings.Count(logs.String(), "level=WARN")
		time.Sleep(9 * time.Second)
		mustKeys(t, k)
		if strings.Count(logs.String(), "level=WARN") != n {
			t.Fatal("retried before RetryInterval")
		}
		time.Sleep(time.Second)
		checkKeys(t, mustKeys(t, k), v1, k1)
		if strings.Count(logs.String(), "level=WARN") != n+1 {
			t.Fatal("did not retry after RetryInterval")
		}
	})
}

func TestFirstLoadFails(t *testing.T) {
	t.Parallel()
	srv := newSMServer(t)
	k := newKeys(t, srv, nil)
	_, err := k.Keys(context.Background())
	var nf *types.ResourceNotFoundException
	if !errors.As(err, &nf) || !strings.HasPrefix(err.Error(), "secretsmanager: describe secret "+secretName) {
		t.Fatalf("Keys = %v, want a wrapped ResourceNotFoundException", err)
	}

	srv.put(secretName, newVersionID(), secretsmanager.NewSecretString())
	if _, err := k.Keys(context.Background()); err != nil {
		t.Fatalf("Keys after the secret appeared: %v", err)
	}

	down := newSMServer(t)
	down.Close()
	if _, err := newKeys(t, down, nil).Keys(context.Background()); err == nil {
		t.Fatal("Keys succeeded with Secrets Manager unreachable")
	}
}

func TestInvalidVersions(t *testing.T) {
	t.Parallel()
	short := `{"key":"` + base64.StdEncoding.EncodeToString(make([]byte, 31)) + `"}`
	for name, value := range map[string]string{
		"short key":   short,
		"not JSON":    "correct horse battery staple",
		"bad base64":  `{"key":"!!!"}`,
		"no key":      `{"secret":"x"}`,
		"key not str": `{"key":42}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newSMServer(t)
			v := newVersionID()
			srv.put(secretName, v, value)
			_, err := newKeys(t, srv, nil).Keys(context.Background())
			if err == nil || !strings.Contains(err.Error(), "version "+v) {
				t.Fatalf("Keys = %v, want an error naming version %s", err, v)
			}
			if strings.Contains(err.Error(), value) {
				t.Fatalf("the error shows the secret: %v", err)
			}
		})
	}

	// An invalid AWSPENDING version is skipped with a warning.
	srv := newSMServer(t)
	cur, pend := newVersionID(), newVersionID()
	s1, k1 := newValue(t)
	srv.put(secretName, cur, s1)
	srv.put(secretName, pend, short, "AWSPENDING")
	var logs mcptest.LogBuffer
	checkKeys(t, mustKeys(t, newKeys(t, srv, &logs)), cur, k1)
	if !strings.Contains(logs.String(), pend) {
		t.Fatalf("no warning naming %s:\n%s", pend, logs.String())
	}
}

func TestKeyID(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"a", "EXAMPLE1-90ab-cdef-fedc-ba987EXAMPLE", strings.Repeat("x", 64)} {
		if got := secretsmanager.KeyID(id); got != id {
			t.Errorf("KeyID(%q) = %q, want it unchanged", id, got)
		}
	}
	for _, id := range []string{"", "with space", "ünïcode", strings.Repeat("x", 65), "a.b"} {
		got := secretsmanager.KeyID(id)
		if got == "" || len(got) > 64 || got == id {
			t.Errorf("KeyID(%q) = %q", id, got)
		}
		for _, c := range got {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
				t.Errorf("KeyID(%q) = %q: invalid character %q", id, got, c)
			}
		}
	}
	if secretsmanager.KeyID("a.b") == secretsmanager.KeyID("a,b") {
		t.Error("different versions share a key id")
	}
}

func TestSecretValueFormat(t *testing.T) {
	t.Parallel()
	s := secretsmanager.NewSecretString()
	var raw map[string]string
	if err := json.Unmarshal([]byte(s), &raw); err != nil || len(raw) != 1 {
		t.Fatalf("NewSecretString() = %s", s)
	}
	b, err := base64.StdEncoding.DecodeString(raw["key"])
	if err != nil || len(b) != core.MinKeyBytes {
		t.Fatalf("key %q: %d bytes, %v", raw["key"], len(b), err)
	}
	v, err := secretsmanager.ParseSecretString(s)
	if err != nil || !bytes.Equal(v.Key, b) {
		t.Fatalf("ParseSecretString = %v, %v", v, err)
	}
	if s2 := secretsmanager.NewSecretString(); s2 == s {
		t.Fatal("two secrets are equal")
	}
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("x", "value", v)
	if strings.Contains(logs.String(), raw["key"]) || !strings.Contains(logs.String(), "REDACTED") {
		t.Fatalf("a SecretValue was logged unredacted: %s", logs.String())
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	srv := newSMServer(t)
	if _, err := secretsmanager.New(srv.client(), "", nil); err == nil {
		t.Error("New accepted an empty secret id")
	}
	if _, err := secretsmanager.New(srv.client(), secretName, &secretsmanager.Options{RefreshInterval: -time.Second}); err == nil {
		t.Error("New accepted a negative RefreshInterval")
	}
}

// RefreshKeys reloads at once (an instance meeting a key it has not loaded
// yet), but asks Secrets Manager at most once per MinForcedRefreshInterval.
func TestRefreshKeysRateLimited(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv, k, v1, k1 := newSecret(t, nil)
		v2, s2, k2 := newVersion(t)
		checkKeys(t, mustKeys(t, k), v1, k1)
		srv.put(secretName, v2, s2) // another instance rotated
		keys, err := k.RefreshKeys(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		checkKeys(t, keys, v2, k2, v1, k1) // at once, not after the refresh interval
		d := srv.count("DescribeSecret")
		for i := 0; i < 50; i++ { // clients can send any key id: no storm
			time.Sleep(100 * time.Millisecond)
			if _, err := k.RefreshKeys(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if n := srv.count("DescribeSecret") - d; n != 0 {
			t.Fatalf("%d DescribeSecret calls within the minimum interval, want 0", n)
		}
		time.Sleep(secretsmanager.MinForcedRefreshInterval)
		if _, err := k.RefreshKeys(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := srv.count("DescribeSecret") - d; n != 1 {
			t.Fatalf("%d DescribeSecret calls after the interval, want 1", n)
		}
	})
}
