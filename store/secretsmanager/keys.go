package secretsmanager

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	sm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/mcpfn/mcpfn/core"
)

// The staging labels that select the keys.
const (
	// StageCurrent marks the version whose key signs (and verifies).
	StageCurrent = "AWSCURRENT"
	// StagePending marks a version being rotated in: its key verifies, so
	// that instances that already sign with it are understood by the others.
	StagePending = "AWSPENDING"
	// StagePrevious marks the version rotated out last: its key verifies
	// state sealed before the rotation.
	StagePrevious = "AWSPREVIOUS"
)

// Defaults of Options.
const (
	// DefaultRefreshInterval is how long fetched keys are used before the
	// secret is asked again.
	DefaultRefreshInterval = 5 * time.Minute
	// DefaultRetryInterval is how long cached keys are served after a
	// refresh failed before the next attempt.
	DefaultRetryInterval = 30 * time.Second
)

// IAMActions returns, in a new slice, the Secrets Manager actions a Keys
// calls: grant them on the secret's ARN. A secret encrypted with a customer
// managed KMS key also needs kms:Decrypt on that key.
func IAMActions() []string {
	return []string{
		"secretsmanager:DescribeSecret",
		"secretsmanager:GetSecretValue",
	}
}

// Client is the part of *secretsmanager.Client (of
// github.com/aws/aws-sdk-go-v2/service/secretsmanager) that Keys calls.
type Client interface {
	DescribeSecret(ctx context.Context, in *sm.DescribeSecretInput, optFns ...func(*sm.Options)) (*sm.DescribeSecretOutput, error)
	GetSecretValue(ctx context.Context, in *sm.GetSecretValueInput, optFns ...func(*sm.Options)) (*sm.GetSecretValueOutput, error)
}

var _ Client = (*sm.Client)(nil)

// Options configures Keys. A nil *Options means all defaults; New copies
// the struct.
type Options struct {
	// RefreshInterval is how long keys are used before the next Keys call
	// asks the secret again. Zero means DefaultRefreshInterval. A rotated
	// key signs everywhere, and a retired one stops verifying, within this
	// interval.
	RefreshInterval time.Duration
	// RetryInterval is how long cached keys are served after a failed
	// refresh before the next attempt. Zero means DefaultRetryInterval, or
	// RefreshInterval when that is shorter.
	RetryInterval time.Duration
	// Logger receives a warning when a refresh fails or a staged version
	// holds no valid key. Nil means slog.Default() (as it is when New runs);
	// slog.New(slog.DiscardHandler) silences them.
	Logger *slog.Logger
}

// Keys is a core.KeyProvider that reads the HMAC keys sealing requestState
// from one Secrets Manager secret: the AWSCURRENT version's key signs, and
// the keys of AWSCURRENT, AWSPENDING and AWSPREVIOUS verify, in that order.
// The key id of each is KeyID of its version id.
//
// Keys caches: it asks Secrets Manager (one DescribeSecret) only on a Keys
// call made RefreshInterval or more after the last refresh, and fetches each
// version's value (one GetSecretValue) once, since versions never change.
// Nothing runs in the background. Keys is safe for concurrent use; of the
// calls that find the cache stale one refreshes, and the others get the
// cached keys meanwhile (or wait, on the first load). Build it with New.
type Keys struct {
	client   Client
	secretID string
	refresh  time.Duration
	retry    time.Duration
	log      *slog.Logger

	mu       sync.Mutex
	keys     []core.Key // published; never modified
	versions []string   // the version ids of keys, in order
	next     time.Time  // when keys become stale
	forced   time.Time  // the last RefreshKeys that asked Secrets Manager
	inflight *refreshCall
	// values caches the staged versions' keys (or why a version has none).
	// Only the one refreshing goroutine touches it.
	values map[string]versionValue
}

type versionValue struct {
	secret []byte
	err    error
}

type refreshCall struct {
	done chan struct{}
	keys []core.Key
	err  error
}

var (
	_ core.KeyProvider  = (*Keys)(nil)
	_ core.KeyRefresher = (*Keys)(nil)
)

// MinForcedRefreshInterval bounds how often RefreshKeys asks Secrets
// Manager: at most once per interval, whatever the callers do.
const MinForcedRefreshInterval = 10 * time.Second

// New returns a provider reading the secret secretID (its name or ARN)
// through client, typically a *secretsmanager.Client. opts may be nil. It
// makes no call: the first Keys call loads the keys, and a server's start
// may call it to fail fast. New returns an error for invalid options and
// panics if client is nil.
func New(client Client, secretID string, opts *Options) (*Keys, error) {
	if client == nil {
		panic("secretsmanager: New: nil Client")
	}
	if secretID == "" {
		return nil, errors.New("secretsmanager: empty secret id")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.RefreshInterval < 0 || o.RetryInterval < 0 {
		return nil, fmt.Errorf("secretsmanager: negative RefreshInterval %v or RetryInterval %v", o.RefreshInterval, o.RetryInterval)
	}
	k := &Keys{client: client, secretID: secretID,
		refresh: cmp.Or(o.RefreshInterval, DefaultRefreshInterval),
		log:     o.Logger, values: map[string]versionValue{}}
	k.retry = cmp.Or(o.RetryInterval, min(DefaultRetryInterval, k.refresh))
	if k.log == nil {
		k.log = slog.Default()
	}
	return k, nil
}

// Keys implements core.KeyProvider. The returned slice is shared and must
// not be modified; it stays the same slice while the keys do not change.
// Keys refreshes the cache when it is stale. When the refresh fails, it
// logs a warning and returns the cached keys; only while nothing has been
// loaded yet does it return the error. A refresh runs with the ctx of the
// call that started it; calls waiting for a first load share its outcome,
// or return early when their own ctx ends.
func (k *Keys) Keys(ctx context.Context) ([]core.Key, error) {
	now := time.Now()
	k.mu.Lock()
	if k.keys != nil && now.Before(k.next) {
		keys := k.keys
		k.mu.Unlock()
		return keys, nil
	}
	if c := k.inflight; c != nil {
		keys := k.keys
		k.mu.Unlock()
		if keys != nil {
			return keys, nil // stale, while another call refreshes
		}
		select {
		case <-c.done:
			return c.keys, c.err
		case <-ctx.Done():
			return nil, fmt.Errorf("secretsmanager: waiting for the keys of %s: %w", k.secretID, ctx.Err())
		}
	}
	c := &refreshCall{done: make(chan struct{})}
	k.inflight = c
	k.mu.Unlock()

	c.err = errors.New("secretsmanager: refresh panicked")
	defer func() {
		k.mu.Lock()
		k.inflight = nil
		k.mu.Unlock()
		close(c.done)
	}()
	keys, versions, err := k.load(ctx)
	k.mu.Lock()
	defer k.mu.Unlock()
	if err != nil {
		if k.keys == nil {
			c.keys, c.err = nil, err
			return nil, err
		}
		k.next = time.Now().Add(k.retry)
		k.log.WarnContext(ctx, "secretsmanager: refreshing signing keys failed; serving the cached keys",
			"secret", k.secretID, "retry_in", k.retry, "error", err)
		c.keys, c.err = k.keys, nil
		return k.keys, nil
	}
	if !slices.Equal(versions, k.versions) {
		k.keys, k.versions = keys, versions
	}
	k.next = time.Now().Add(k.refresh)
	c.keys, c.err = k.keys, nil
	return k.keys, nil
}

// RefreshKeys implements core.KeyRefresher: the server calls it when a
// sealed state names a key this instance has not loaded yet (another
// instance saw a rotation first). It refreshes at once, but at most once per
// MinForcedRefreshInterval; otherwise it returns the cached keys.
func (k *Keys) RefreshKeys(ctx context.Context) ([]core.Key, error) {
	k.mu.Lock()
	if now := time.Now(); k.keys == nil || now.Sub(k.forced) >= MinForcedRefreshInterval {
		k.forced = now
		k.next = time.Time{}
	}
	k.mu.Unlock()
	return k.Keys(ctx)
}

// load reads the staged versions of the secret and their keys.
func (k *Keys) load(ctx context.Context) ([]core.Key, []string, error) {
	out, err := k.client.DescribeSecret(ctx, &sm.DescribeSecretInput{SecretId: &k.secretID})
	if err != nil {
		return nil, nil, fmt.Errorf("secretsmanager: describe secret %s: %w", k.secretID, err)
	}
	var current string
	var pending, previous []string
	for id, stages := range out.VersionIdsToStages {
		switch {
		case slices.Contains(stages, StageCurrent):
			current = id
		case slices.Contains(stages, StagePending):
			pending = append(pending, id)
		case slices.Contains(stages, StagePrevious):
			previous = append(previous, id)
		}
	}
	if current == "" {
		return nil, nil, fmt.Errorf("secretsmanager: secret %s has no %s version", k.secretID, StageCurrent)
	}
	slices.Sort(pending)
	slices.Sort(previous)
	staged := append(append([]string{current}, pending...), previous...)

	var keys []core.Key
	var versions []string
	for _, id := range staged {
		v, ok := k.values[id]
		if !ok {
			out, err := k.client.GetSecretValue(ctx, &sm.GetSecretValueInput{SecretId: &k.secretID, VersionId: &id})
			if err != nil {
				return nil, nil, fmt.Errorf("secretsmanager: get secret %s version %s: %w", k.secretID, id, err)
			}
			v = parseVersion(out)
			k.values[id] = v
		}
		if v.err != nil {
			err := fmt.Errorf("secretsmanager: secret %s version %s: %w", k.secretID, id, v.err)
			if id == current {
				return nil, nil, err
			}
			k.log.WarnContext(ctx, "secretsmanager: skipping a staged version without a valid key", "error", err)
			continue
		}
		keys = append(keys, core.Key{ID: KeyID(id), Secret: v.secret})
		versions = append(versions, id)
	}
	for id := range k.values {
		if !slices.Contains(staged, id) {
			delete(k.values, id)
		}
	}
	return keys, versions, nil
}

func parseVersion(out *sm.GetSecretValueOutput) versionValue {
	if out.SecretString == nil {
		return versionValue{err: errors.New(`no SecretString; want {"key":"<base64>"}`)}
	}
	v, err := ParseSecretString(*out.SecretString)
	if err != nil {
		return versionValue{err: err}
	}
	return versionValue{secret: v.Key}
}
