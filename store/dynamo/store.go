package dynamo

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	mathrand "math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/mcpfn/mcpfn/core"
)

// Client is the part of *dynamodb.Client that a Store calls, one method per
// action of [IAMActions]. Tests may wrap a *dynamodb.Client to count or
// delay calls.
type Client interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

var _ Client = (*dynamodb.Client)(nil)

// Defaults of Options.
const (
	// DefaultAnonymousShardSize bounds the sessions of one shard of the
	// anonymous pool: a limit of 10,000 anonymous sessions makes 10 shards.
	DefaultAnonymousShardSize = 1000
	// DefaultMaxAttempts is 1: the Store does not retry throttled calls
	// itself, and leaves that to the SDK client's retryer.
	DefaultMaxAttempts = 1
	// DefaultMaxBackoff caps the wait between the Store's own retries.
	DefaultMaxBackoff = time.Second
)

// Options configures a Store. A nil *Options means all defaults; New copies
// the struct.
type Options struct {
	// TableName is the session table, created by CreateTable or with the
	// schema of TableInput. Empty means DefaultTableName.
	TableName string
	// AnonymousShardSize splits the anonymous pool into
	// ceil(Anonymous/AnonymousShardSize) shards, each holding at most
	// ceil(Anonymous/shards) sessions, so that a Create reads one shard, not
	// the whole pool (see the package doc). Zero means
	// DefaultAnonymousShardSize. All instances sharing a table must use the
	// same value and the same limits.
	AnonymousShardSize int
	// TaskShardSize bounds the entries of one task-count item of a
	// [TaskStore]: a per-principal task limit above it is counted in
	// ceil(limit/TaskShardSize) items, each holding ceil(limit/shards)
	// tasks, chosen by a hash of the task id (see [TaskStore.Create]).
	// Zero means DefaultTaskShardSize; at most MaxTaskShardSize; a Store
	// ignores it. All instances
	// sharing a table must use the same value and the same limits.
	TaskShardSize int
	// ChangeLog names the log of a [ChangeBus]: servers that share a table
	// but not their change notifications use different names. Empty means
	// "default". A Store and a TaskStore ignore it.
	ChangeLog string
	// ChangeLogSize is the number of changes a [ChangeBus] keeps: an
	// instance that falls further behind between two reads tells its
	// streams that every list changed. Zero means DefaultChangeLogSize; at
	// most MaxChangeLogSize. A Store and a TaskStore ignore it.
	ChangeLogSize int
	// MaxAttempts is the number of attempts of a DynamoDB call that fails
	// with a throttling error (ProvisionedThroughputExceededException,
	// ThrottlingException, RequestLimitExceeded, ...), on top of the
	// client's own retryer. Zero means DefaultMaxAttempts (no retries of
	// the Store's own).
	MaxAttempts int
	// MaxBackoff caps the jittered exponential wait between those attempts
	// (starting at 10ms). Zero means DefaultMaxBackoff.
	MaxBackoff time.Duration
	// Logger receives warnings about skipped evictions and malformed
	// items. Nil means slog.Default() (as it is when New runs);
	// slog.New(slog.DiscardHandler) silences them.
	Logger *slog.Logger
}

// Store is a core.SessionStore on one DynamoDB table. It is safe for
// concurrent use by many goroutines and by many processes sharing the table:
// every write is conditional, so instances need no coordination. Build it
// with New.
type Store struct {
	client      Client
	table       string
	shardSize   int
	maxAttempts int
	maxBackoff  time.Duration
	log         *slog.Logger
	// now is time.Now; the tests against a DynamoDB emulator (a process
	// reached over real sockets, so never inside a testing/synctest
	// bubble) replace it to step across an expiry exactly.
	now func() time.Time

	// failureItems records that the endpoint returns the old item with a
	// ConditionalCheckFailedException (DynamoDB does; dynalite does not).
	// Until it does, a failed write without one is classified by a read.
	failureItems atomic.Bool
	noItemsOnce  sync.Once
}

var _ core.SessionStore = (*Store)(nil)

// New returns a Store that uses client, which is typically a
// *dynamodb.Client. opts may be nil. It returns an error for invalid
// options; it does not call DynamoDB, so a missing table shows on first
// use. New panics if client is nil.
func New(client Client, opts *Options) (*Store, error) {
	if client == nil {
		panic("dynamo: New: nil Client")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	s := &Store{client: client, table: cmp.Or(o.TableName, DefaultTableName),
		shardSize:   cmp.Or(o.AnonymousShardSize, DefaultAnonymousShardSize),
		maxAttempts: cmp.Or(o.MaxAttempts, DefaultMaxAttempts),
		maxBackoff:  cmp.Or(o.MaxBackoff, DefaultMaxBackoff),
		log:         o.Logger, now: time.Now}
	if err := checkTableName(s.table); err != nil {
		return nil, err
	}
	switch {
	case s.shardSize < 0:
		return nil, fmt.Errorf("dynamo: negative AnonymousShardSize %d", s.shardSize)
	case s.maxAttempts < 0:
		return nil, fmt.Errorf("dynamo: negative MaxAttempts %d", s.maxAttempts)
	case s.maxBackoff < 0:
		return nil, fmt.Errorf("dynamo: negative MaxBackoff %v", s.maxBackoff)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s, nil
}

func checkTableName(name string) error {
	if len(name) < 3 || len(name) > 255 {
		return fmt.Errorf("dynamo: table name %q: must have 3 to 255 characters", name)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Errorf("dynamo: table name %q: only A-Z, a-z, 0-9, '_', '-' and '.' are allowed", name)
		}
	}
	return nil
}

// TableName returns the name of the table the Store uses.
func (s *Store) TableName() string { return s.table }

// Create implements core.SessionStore. It writes the record with one
// conditional PutItem (failing when the id is in use by a live session),
// then, when the pool has a limit, reads the pool from PoolIndex with one
// Query (a page per MB of index data) and deletes the least recently used
// sessions over the limit with one conditional DeleteItem each. The new
// session is never evicted. Eviction is best-effort: a failed eviction is
// logged and left to the next Create in that pool, since the session itself
// is already stored.
func (s *Store) Create(ctx context.Context, rec *core.SessionRecord, lim core.SessionLimits) ([]string, error) {
	if rec == nil || rec.ID == "" {
		return nil, errors.New("dynamo: create session: empty id")
	}
	now := s.now()
	pool, limit := s.pool(rec, lim)
	wid := newWriteID()
	err := createItem(ctx, s, encode(rec, pool, 1, wid), now)
	if err != nil {
		old, failed, cerr := s.conditionFailed(ctx, err, rec.ID)
		switch {
		case cerr != nil:
			return nil, fmt.Errorf("dynamo: create session: %w", cerr)
		case !failed:
			return nil, fmt.Errorf("dynamo: create session: %w", err)
		case old == nil || old.wid != wid:
			return nil, errors.New("dynamo: create session: id already in use")
		}
		// An earlier attempt of this very write landed (the SDK retried).
	}
	rec.Version = 1
	if limit <= 0 {
		return nil, nil
	}
	evicted, err := s.evict(ctx, pool, limit, rec.ID)
	if err != nil {
		s.log.WarnContext(ctx, "dynamo: evicting least recently used sessions failed; the next session created in the pool retries",
			"pool_limit", limit, "evicted", len(evicted), "error", err)
	}
	return evicted, nil
}

// pool returns the eviction pool of rec and that pool's limit.
func (s *Store) pool(rec *core.SessionRecord, lim core.SessionLimits) (string, int) {
	if rec.Principal != "" {
		return "p#" + rec.Principal, lim.PerPrincipal
	}
	shards, limit := 1, lim.Anonymous
	if limit > s.shardSize {
		shards = (limit + s.shardSize - 1) / s.shardSize
		limit = (limit + shards - 1) / shards
	}
	h := fnv.New32a()
	h.Write([]byte(rec.ID))
	return "a#" + strconv.Itoa(int(h.Sum32()%uint32(shards))), limit
}

// evict deletes the least recently used live sessions of pool beyond limit,
// keeping the session keep, and returns their ids.
func (s *Store) evict(ctx context.Context, pool string, limit int, keep string) ([]string, error) {
	type entry struct {
		id string
		lu int64
	}
	now := s.now()
	var others []entry
	var start attrs
	for {
		out, err := withRetry(ctx, s, func(ctx context.Context) (*dynamodb.QueryOutput, error) {
			return s.client.Query(ctx, &dynamodb.QueryInput{
				TableName:              &s.table,
				IndexName:              aws.String(PoolIndex),
				KeyConditionExpression: aws.String("#pool = :pool"),
				FilterExpression:       aws.String("#exp > :now"),
				ProjectionExpression:   aws.String("#pk, #lu"),
				ExpressionAttributeNames: map[string]string{
					"#pool": PoolAttribute, "#exp": ExpiresAttribute, "#pk": PartitionKey, "#lu": LastUsedAttribute},
				ExpressionAttributeValues: attrs{":pool": attrS(pool), ":now": attrN(now.UnixMilli())},
				ExclusiveStartKey:         start,
			})
		})
		if err != nil {
			return nil, fmt.Errorf("query pool: %w", err)
		}
		for _, it := range out.Items {
			pk, err := getS(it, PartitionKey, true)
			var lu int64
			if err == nil {
				lu, err = getN(it, LastUsedAttribute)
			}
			id, ok := strings.CutPrefix(pk, KeyPrefix)
			if err == nil && !ok {
				err = fmt.Errorf("malformed item: %s %q lacks the prefix %q", PartitionKey, pk, KeyPrefix)
			}
			if err != nil {
				s.log.WarnContext(ctx, "dynamo: skipping a malformed item of the pool index", "error", err)
				continue
			}
			if id != keep {
				others = append(others, entry{id, lu})
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		start = out.LastEvaluatedKey
	}
	over := len(others) - (limit - 1)
	if over <= 0 {
		return nil, nil
	}
	slices.SortFunc(others, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.lu, b.lu), strings.Compare(a.id, b.id))
	})
	var evicted []string
	for _, e := range others[:over] {
		// Only if still unused since the query: a session used meanwhile
		// is no longer the least recently used one.
		_, err := withRetry(ctx, s, func(ctx context.Context) (*dynamodb.DeleteItemOutput, error) {
			return s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
				TableName:                 &s.table,
				Key:                       key(e.id),
				ConditionExpression:       aws.String("#lu = :lu"),
				ExpressionAttributeNames:  map[string]string{"#lu": LastUsedAttribute},
				ExpressionAttributeValues: attrs{":lu": attrN(e.lu)},
			})
		})
		var ccf *types.ConditionalCheckFailedException
		switch {
		case errors.As(err, &ccf): // used or deleted meanwhile
		case err != nil:
			return evicted, fmt.Errorf("delete session: %w", err)
		default:
			evicted = append(evicted, e.id)
		}
	}
	return evicted, nil
}

// Get implements core.SessionStore with one strongly consistent GetItem.
func (s *Store) Get(ctx context.Context, id string) (*core.SessionRecord, error) {
	now := s.now()
	st, err := s.read(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("dynamo: get session: %w", err)
	}
	if st == nil || !st.live(now) {
		return nil, fmt.Errorf("dynamo: get session: %w", core.ErrSessionNotFound)
	}
	return st.rec, nil
}

// read returns the item of id as stored, or nil when there is none.
func (s *Store) read(ctx context.Context, id string) (*stored, error) {
	item, err := s.getItem(ctx, key(id))
	if err != nil || item == nil {
		return nil, err
	}
	return decode(item)
}

// getItem reads the item with key k, strongly consistent (sessions and
// tasks are read right after another instance wrote them), with the
// store's retries; a missing item is nil.
func (s *Store) getItem(ctx context.Context, k attrs) (attrs, error) {
	out, err := withRetry(ctx, s, func(ctx context.Context) (*dynamodb.GetItemOutput, error) {
		return s.client.GetItem(ctx, &dynamodb.GetItemInput{
			TableName:      &s.table,
			Key:            k,
			ConsistentRead: aws.Bool(true),
		})
	})
	if err != nil || len(out.Item) == 0 {
		return nil, err
	}
	return out.Item, nil
}

// Update implements core.SessionStore with one UpdateItem conditioned on
// the version and the expiry. Failures are told apart with the old item
// that DynamoDB returns with the ConditionalCheckFailedException; see the
// package doc for endpoints that do not return it.
func (s *Store) Update(ctx context.Context, rec *core.SessionRecord) error {
	if rec == nil || rec.ID == "" {
		return fmt.Errorf("dynamo: update session: %w", core.ErrSessionNotFound)
	}
	now := s.now()
	wid := newWriteID()
	next := rec.Version + 1
	names := map[string]string{"#lu": LastUsedAttribute, "#exp": ExpiresAttribute,
		"#ttl": TTLAttribute, "#ver": VersionAttribute, "#wid": WriteAttribute, "#data": DataAttribute}
	values := attrs{
		":lu":   attrN(rec.LastUsed.UnixMilli()),
		":exp":  attrN(rec.Expires.UnixMilli()),
		":ttl":  attrN(ttlSeconds(rec.Expires)),
		":ver":  attrN(rec.Version),
		":next": attrN(next),
		":wid":  attrS(wid),
		":now":  attrN(now.UnixMilli()),
	}
	expr := "SET #lu = :lu, #exp = :exp, #ttl = :ttl, #ver = :next, #wid = :wid"
	if len(rec.Data) > 0 {
		expr += ", #data = :data"
		values[":data"] = &types.AttributeValueMemberB{Value: append([]byte(nil), rec.Data...)}
	} else {
		expr += " REMOVE #data"
	}
	err := versionedUpdate(ctx, s, key(rec.ID), expr, names, values)
	if err != nil {
		old, failed, cerr := s.conditionFailed(ctx, err, rec.ID)
		switch {
		case cerr != nil:
			return fmt.Errorf("dynamo: update session: %w", cerr)
		case !failed:
			return fmt.Errorf("dynamo: update session: %w", err)
		case old != nil && old.wid == wid && old.rec.Version == next:
			// An earlier attempt of this very write landed (the SDK retried).
		case old == nil || !old.live(now):
			return fmt.Errorf("dynamo: update session: %w", core.ErrSessionNotFound)
		default:
			return fmt.Errorf("dynamo: update session: %w", core.ErrSessionConflict)
		}
	}
	rec.Version = next
	return nil
}

// Delete implements core.SessionStore with one DeleteItem conditioned on the
// session being live.
func (s *Store) Delete(ctx context.Context, id string) error {
	now := s.now()
	_, err := withRetry(ctx, s, func(ctx context.Context) (*dynamodb.DeleteItemOutput, error) {
		return s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName:                 &s.table,
			Key:                       key(id),
			ConditionExpression:       aws.String("attribute_exists(#pk) AND #exp > :now"),
			ExpressionAttributeNames:  map[string]string{"#pk": PartitionKey, "#exp": ExpiresAttribute},
			ExpressionAttributeValues: attrs{":now": attrN(now.UnixMilli())},
		})
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return fmt.Errorf("dynamo: delete session: %w", core.ErrSessionNotFound)
	case err != nil:
		return fmt.Errorf("dynamo: delete session: %w", err)
	}
	return nil
}

// conditionFailed reports whether err is a ConditionalCheckFailedException
// and, if so, returns the item of id as it was when the write failed (nil
// when there was none): from the exception when the endpoint returned it,
// else from a strongly consistent read.
func (s *Store) conditionFailed(ctx context.Context, err error, id string) (*stored, bool, error) {
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return nil, false, nil
	}
	if len(ccf.Item) > 0 {
		s.failureItems.Store(true)
		st, err := decode(ccf.Item)
		return st, true, err
	}
	if s.failureItems.Load() {
		return nil, true, nil // the endpoint returns old items: there was none
	}
	st, err := s.read(ctx, id)
	if err != nil {
		return nil, true, fmt.Errorf("reading after a failed conditional write: %w", err)
	}
	if st != nil {
		s.noItemsOnce.Do(func() {
			s.log.InfoContext(ctx, "dynamo: the endpoint ignores ReturnValuesOnConditionCheckFailure; failed conditional writes are classified with a read")
		})
	}
	return st, true, nil
}

// withRetry calls call, and again while it fails with a throttling error,
// up to the Store's MaxAttempts with jittered exponential backoff.
// createItem sends the PutItem of a new item: it applies only where no
// item lives at its key (none, or one expired before now), and a failed
// condition returns the old item (see conditionFailed).
func createItem(ctx context.Context, s *Store, item attrs, now time.Time) error {
	_, err := withRetry(ctx, s, func(ctx context.Context) (*dynamodb.PutItemOutput, error) {
		return s.client.PutItem(ctx, &dynamodb.PutItemInput{
			TableName:           &s.table,
			Item:                item,
			ConditionExpression: aws.String("attribute_not_exists(#pk) OR #exp <= :now"),
			ExpressionAttributeNames: map[string]string{
				"#pk": PartitionKey, "#exp": ExpiresAttribute},
			ExpressionAttributeValues:           attrs{":now": attrN(now.UnixMilli())},
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
	})
	return err
}

// versionedUpdate sends the UpdateItem of a versioned write of the item
// at key: expr applies only while the item's version is values[":ver"] and
// it has not expired (values[":now"]), and a failed condition returns the
// old item (see conditionFailed). names must map #ver and #exp.
func versionedUpdate(ctx context.Context, s *Store, key attrs, expr string, names map[string]string, values attrs) error {
	_, err := withRetry(ctx, s, func(ctx context.Context) (*dynamodb.UpdateItemOutput, error) {
		return s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                           &s.table,
			Key:                                 key,
			UpdateExpression:                    aws.String(expr),
			ConditionExpression:                 aws.String("#ver = :ver AND #exp > :now"),
			ExpressionAttributeNames:            names,
			ExpressionAttributeValues:           values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
	})
	return err
}

func withRetry[T any](ctx context.Context, s *Store, call func(context.Context) (T, error)) (T, error) {
	delay := min(10*time.Millisecond, s.maxBackoff)
	for attempt := 1; ; attempt++ {
		out, err := call(ctx)
		if err == nil || attempt >= s.maxAttempts || !isThrottle(err) {
			return out, err
		}
		t := time.NewTimer(delay/2 + mathrand.N(delay/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return out, err
		case <-t.C:
		}
		delay = min(2*delay, s.maxBackoff)
	}
}

var throttles = retry.IsErrorThrottles(retry.DefaultThrottles)

func isThrottle(err error) bool { return throttles.IsErrorThrottle(err) == aws.TrueTernary }

func newWriteID() string {
	b := make([]byte, 9)
	rand.Read(b)
	return hex.EncodeToString(b)
}
