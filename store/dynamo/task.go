package dynamo

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	mathrand "math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/mcpfn/mcpfn/core"
)

// DefaultTaskShardSize bounds the entries of one task-count item: a
// principal's tasks are counted in ceil(limit/DefaultTaskShardSize) items,
// so that the item Create reads and rewrites stays small (some 60 bytes an
// entry: 6 KB for 100 tasks).
const DefaultTaskShardSize = 100

// MaxTaskShardSize bounds Options.TaskShardSize: 5000 entries (some 300 KB)
// keep a task-count item under DynamoDB's 400 KB item limit.
const MaxTaskShardSize = 5000

// maxCountAttempts bounds the rounds of Create's read-check-write of a
// task-count item under contention (each round one concurrent Create of
// the shard wins).
const maxCountAttempts = 64

// TaskStore is a core.TaskStore on the session table of a [Store]: task
// items and task-count items live beside the session items under key
// prefixes of their own ([TaskKeyPrefix], [TaskCountKeyPrefix]), outside
// PoolIndex. It is safe for concurrent use by many goroutines and by many
// processes sharing the table: every write is conditional. Build it with
// NewTaskStore.
type TaskStore struct {
	s         *Store
	shardSize int
}

var _ core.TaskStore = (*TaskStore)(nil)

// NewTaskStore returns a TaskStore on the table of opts (the session
// table; see [Options]) that uses client, typically a *dynamodb.Client.
// opts may be nil; its AnonymousShardSize does not apply to tasks,
// TaskShardSize does. The IAM actions are those of [IAMActions] on the
// table: no other. It returns an error for invalid options; it does not
// call DynamoDB. NewTaskStore panics if client is nil.
func NewTaskStore(client Client, opts *Options) (*TaskStore, error) {
	if client == nil {
		panic("dynamo: NewTaskStore: nil Client")
	}
	s, err := New(client, opts)
	if err != nil {
		return nil, err
	}
	t := &TaskStore{s: s, shardSize: DefaultTaskShardSize}
	if opts != nil && opts.TaskShardSize != 0 {
		if opts.TaskShardSize < 0 || opts.TaskShardSize > MaxTaskShardSize {
			return nil, fmt.Errorf("dynamo: TaskShardSize %d: must be 0 (the default) to %d, so that a task-count item fits in an item", opts.TaskShardSize, MaxTaskShardSize)
		}
		t.shardSize = opts.TaskShardSize
	}
	return t, nil
}

// TableName returns the name of the table the TaskStore uses.
func (t *TaskStore) TableName() string { return t.s.table }

// Create implements core.TaskStore. With limits, it first counts the task
// in its principal's task-count item (one strongly consistent GetItem and
// one PutItem conditioned on the item's version; again while concurrent
// Creates of the shard win), refusing with a *core.TaskLimitError when the
// shard holds its share of unexpired tasks, or of their charged bytes,
// already; then it writes the task item with one PutItem conditioned on
// the id being free. A record
// whose item would exceed [MaxItemBytes] is refused first, with
// core.ErrTaskTooLarge, and nothing is written. When the task item cannot
// be written the count is taken back (one conditional UpdateItem); when
// the outcome is unknown (a timeout) it is kept until the task's expiry,
// which errs on the side of the bound.
func (t *TaskStore) Create(ctx context.Context, rec *core.TaskRecord, limits core.TaskLimits) error {
	if rec == nil || rec.ID == "" {
		return errors.New("dynamo: create task: empty id")
	}
	s := t.s
	now := s.now()
	countKey, shardLimits := "", core.TaskLimits{}
	if limits.Tasks > 0 || limits.Bytes > 0 {
		countKey, shardLimits = t.countShard(rec, limits)
	}
	wid := newWriteID()
	item, err := encodeTask(rec, 1, wid, countKey)
	if err != nil {
		return fmt.Errorf("dynamo: create task: %w", err)
	}
	if n := itemSize(item); n > MaxItemBytes {
		return fmt.Errorf("dynamo: create task: the item would have %d bytes, DynamoDB's limit is %d: %w", n, MaxItemBytes, core.ErrTaskTooLarge)
	}
	if countKey != "" {
		if err := t.count(ctx, countKey, shardLimits, rec, now); err != nil {
			return fmt.Errorf("dynamo: create task: %w", err)
		}
	}
	if err = createItem(ctx, s, item, now); err != nil {
		old, failed, cerr := t.conditionFailed(ctx, err, rec.ID)
		switch {
		case cerr != nil:
			return fmt.Errorf("dynamo: create task: %w", cerr)
		case failed && old != nil && old.wid == wid:
			// An earlier attempt of this very write landed (the SDK retried).
		case failed:
			t.uncount(ctx, countKey, rec)
			return fmt.Errorf("dynamo: create task: id already in use: %w", core.ErrTaskConflict)
		case tooLarge(err):
			t.uncount(ctx, countKey, rec)
			return fmt.Errorf("dynamo: create task: %v: %w", err, core.ErrTaskTooLarge)
		default:
			return fmt.Errorf("dynamo: create task: %w", err)
		}
	}
	rec.Version = 1
	return nil
}

// countShard returns the task-count item that counts rec and the share of
// limits that item may hold: a bound of tasks over the shard size is
// split into ceil(limits.Tasks/shardSize) shards by a hash of the task id,
// each holding ceil(limits.Tasks/shards) tasks and ceil(limits.Bytes/shards)
// bytes.
func (t *TaskStore) countShard(rec *core.TaskRecord, limits core.TaskLimits) (string, core.TaskLimits) {
	shards, per := 1, limits
	if limit := limits.Tasks; t.shardSize > 0 && limit > t.shardSize {
		shards = (limit + t.shardSize - 1) / t.shardSize
		per.Tasks = (limit + shards - 1) / shards
		if per.Bytes > 0 {
			per.Bytes = (limits.Bytes + int64(shards) - 1) / int64(shards)
		}
	}
	h := fnv.New32a()
	h.Write([]byte(rec.ID))
	shard := strconv.Itoa(int(h.Sum32() % uint32(shards)))
	if rec.Principal == "" {
		return TaskCountKeyPrefix + "a#" + shard, per
	}
	return TaskCountKeyPrefix + "p#" + rec.Principal + "#" + shard, per
}

// count adds rec to the task-count item key, which may hold limits of
// unexpired entries: read, drop the expired entries, check, write back
// conditioned on the version read; again when another Create won.
func (t *TaskStore) count(ctx context.Context, key string, limits core.TaskLimits, rec *core.TaskRecord, now time.Time) error {
	s := t.s
	wid := newWriteID()
	delay := 2 * time.Millisecond
	for attempt := 1; ; attempt++ {
		c, err := t.readCount(ctx, key)
		if err != nil {
			return fmt.Errorf("reading the task count: %w", err)
		}
		if c.wid == wid {
			return nil // an earlier attempt of this very write landed
		}
		live := make(map[string]int64, len(c.entries)+1)
		charges := make(map[string]int64, len(c.charges)+1)
		var charged, first int64
		for id, exp := range c.entries {
			if exp > now.UnixMilli() {
				live[id] = exp
				if n := c.charges[id]; n != 0 {
					charges[id] = n
					charged += n
				}
				if first == 0 || exp < first {
					first = exp
				}
			}
		}
		if _, dup := live[rec.ID]; dup {
			return fmt.Errorf("id already in use: %w", core.ErrTaskConflict)
		}
		var retryAt time.Time
		if first != 0 {
			retryAt = time.UnixMilli(first)
		}
		if limits.Tasks > 0 && len(live) >= limits.Tasks {
			return fmt.Errorf("%d unexpired tasks counted in %s: %w", len(live), key,
				&core.TaskLimitError{Reason: core.TaskLimitCount, Limit: int64(limits.Tasks), RetryAt: retryAt})
		}
		if limits.Bytes > 0 && charged+rec.Charge > limits.Bytes {
			return fmt.Errorf("%d bytes charged in %s: %w", charged, key,
				&core.TaskLimitError{Reason: core.TaskLimitBytes, Limit: limits.Bytes, RetryAt: retryAt})
		}
		live[rec.ID] = rec.Expires.UnixMilli()
		if rec.Charge != 0 {
			charges[rec.ID] = rec.Charge
		}
		cond, values := "#ver = :ver", attrs{":ver": attrN(c.version)}
		if c.version == 0 {
			cond, values = "attribute_not_exists(#ver)", nil
		}
		_, err = withRetry(ctx, s, func(ctx context.Context) (*dynamodb.PutItemOutput, error) {
			return s.client.PutItem(ctx, &dynamodb.PutItemInput{
				TableName:                 &s.table,
				Item:                      encodeTaskCount(key, &taskCount{version: c.version + 1, wid: wid, entries: live, charges: charges}),
				ConditionExpression:       aws.String(cond),
				ExpressionAttributeNames:  map[string]string{"#ver": VersionAttribute},
				ExpressionAttributeValues: values,
			})
		})
		var ccf *types.ConditionalCheckFailedException
		switch {
		case err == nil:
			return nil
		case !errors.As(err, &ccf):
			return fmt.Errorf("writing the task count: %w", err)
		case attempt >= maxCountAttempts:
			return fmt.Errorf("the task count %s changed concurrently %d times in a row", key, attempt)
		}
		// Another Create of the shard won: read again after a jittered
		// pause, so that the losers do not collide again at once.
		tm := time.NewTimer(delay/2 + mathrand.N(delay/2+1))
		select {
		case <-ctx.Done():
			tm.Stop()
			return ctx.Err()
		case <-tm.C:
		}
		delay = min(2*delay, 100*time.Millisecond)
	}
}

func (t *TaskStore) readCount(ctx context.Context, key string) (*taskCount, error) {
	item, err := t.s.getItem(ctx, attrs{PartitionKey: attrS(key)})
	if err != nil {
		return nil, err
	}
	if item == nil {
		return &taskCount{entries: map[string]int64{}, charges: map[string]int64{}}, nil
	}
	return decodeTaskCount(item)
}

// uncount takes back the entry count added for rec, if it is still the
// one added. A failure is logged: the entry then lapses at rec.Expires.
func (t *TaskStore) uncount(ctx context.Context, key string, rec *core.TaskRecord) {
	if key == "" {
		return
	}
	s := t.s
	_, err := withRetry(ctx, s, func(ctx context.Context) (*dynamodb.UpdateItemOutput, error) {
		return s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                &s.table,
			Key:                      attrs{PartitionKey: attrS(key)},
			UpdateExpression:         aws.String("REMOVE #tasks.#id, #charges.#id SET #ver = #ver + :one, #wid = :wid"),
			ConditionExpression:      aws.String("#tasks.#id = :exp AND attribute_exists(#charges)"),
			ExpressionAttributeNames: map[string]string{"#tasks": TaskEntriesAttribute, "#charges": TaskChargesAttribute, "#id": rec.ID, "#ver": VersionAttribute, "#wid": WriteAttribute},
			ExpressionAttributeValues: attrs{":one": attrN(1), ":wid": attrS(newWriteID()),
				":exp": attrN(rec.Expires.UnixMilli())},
		})
	})
	var ccf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &ccf) {
		s.log.WarnContext(ctx, "dynamo: taking back the count of a task that was not created failed; it lapses when the task would have expired",
			"error", err)
	}
}

// Get implements core.TaskStore with one strongly consistent GetItem.
func (t *TaskStore) Get(ctx context.Context, id string) (*core.TaskRecord, error) {
	now := t.s.now()
	st, err := t.read(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("dynamo: get task: %w", err)
	}
	if st == nil || !st.live(now) {
		return nil, fmt.Errorf("dynamo: get task: %w", core.ErrTaskNotFound)
	}
	return st.rec, nil
}

func (t *TaskStore) read(ctx context.Context, id string) (*storedTask, error) {
	if id == "" {
		return nil, nil
	}
	item, err := t.s.getItem(ctx, taskKey(id))
	if err != nil || item == nil {
		return nil, err
	}
	return decodeTask(item)
}

// Update implements core.TaskStore with one UpdateItem that replaces the record,
// conditioned on the stored version being rec.Version and the task being
// unexpired. Failures are told apart as [Store.Update]'s are. The count of
// the task (Create's limit) keeps the Expires of its creation.
func (t *TaskStore) Update(ctx context.Context, rec *core.TaskRecord) error {
	if rec == nil || rec.ID == "" {
		return fmt.Errorf("dynamo: update task: %w", core.ErrTaskNotFound)
	}
	s := t.s
	now := s.now()
	wid := newWriteID()
	next := rec.Version + 1
	// Every attribute but the key and TaskCountAttribute (which Create
	// set and which never changes) is replaced.
	item, err := encodeTask(rec, next, wid, "")
	if err != nil {
		return fmt.Errorf("dynamo: update task: %w", err)
	}
	if n := itemSize(item) + countKeyBound(rec); n > MaxItemBytes {
		return fmt.Errorf("dynamo: update task: the item would have %d bytes, DynamoDB's limit is %d: %w", n, MaxItemBytes, core.ErrTaskTooLarge)
	}
	names := map[string]string{"#ver": VersionAttribute, "#exp": ExpiresAttribute}
	values := attrs{":ver": attrN(rec.Version), ":now": attrN(now.UnixMilli())}
	var sets []string
	for _, name := range slices.Sorted(maps.Keys(item)) {
		if name == PartitionKey {
			continue
		}
		i := strconv.Itoa(len(sets))
		names["#a"+i] = name
		values[":v"+i] = item[name]
		sets = append(sets, "#a"+i+" = :v"+i)
	}
	expr := "SET " + strings.Join(sets, ", ")
	if err = versionedUpdate(ctx, s, taskKey(rec.ID), expr, names, values); err != nil {
		old, failed, cerr := t.conditionFailed(ctx, err, rec.ID)
		switch {
		case cerr != nil:
			return fmt.Errorf("dynamo: update task: %w", cerr)
		case failed && old != nil && old.wid == wid && old.rec.Version == next:
			// An earlier attempt of this very write landed (the SDK retried).
		case failed && (old == nil || !old.live(now)):
			return fmt.Errorf("dynamo: update task: %w", core.ErrTaskNotFound)
		case failed:
			return fmt.Errorf("dynamo: update task: %w", core.ErrTaskConflict)
		case tooLarge(err):
			return fmt.Errorf("dynamo: update task: %v: %w", err, core.ErrTaskTooLarge)
		default:
			return fmt.Errorf("dynamo: update task: %w", err)
		}
	}
	rec.Version = next
	return nil
}

// countKeyBound is the most TaskCountAttribute can add to rec's item.
func countKeyBound(rec *core.TaskRecord) int {
	return len(TaskCountAttribute) + len(TaskCountKeyPrefix) + len("p#") + len(rec.Principal) + len("#") + 10
}

// conditionFailed is [Store.conditionFailed] for task items.
func (t *TaskStore) conditionFailed(ctx context.Context, err error, id string) (*storedTask, bool, error) {
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return nil, false, nil
	}
	s := t.s
	if len(ccf.Item) > 0 {
		s.failureItems.Store(true)
		st, err := decodeTask(ccf.Item)
		return st, true, err
	}
	if s.failureItems.Load() {
		return nil, true, nil
	}
	st, err := t.read(ctx, id)
	if err != nil {
		return nil, true, fmt.Errorf("reading after a failed conditional write: %w", err)
	}
	return st, true, nil
}

// tooLarge reports whether err is DynamoDB's refusal of an item over its
// size limit (a ValidationException).
func tooLarge(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "ValidationException" &&
		strings.Contains(strings.ToLower(ae.ErrorMessage()), "item size")
}
