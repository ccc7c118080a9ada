package dynamo

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/mcpfn/mcpfn/core"
)

// The task items' part of the table's schema: they share the session table
// and its key attribute, under key prefixes of their own, and carry neither
// [PoolAttribute] nor [LastUsedAttribute], so PoolIndex (a sparse index)
// never lists them.
const (
	// TaskKeyPrefix starts the PartitionKey of a task item: "t#" and the
	// task id. Session items start with [KeyPrefix] ("s#"): an id that is
	// both a session's and a task's names two items.
	TaskKeyPrefix = "t#"
	// TaskCountKeyPrefix starts the PartitionKey of a task-count item, one
	// per shard of a principal's tasks (see [TaskStore.Create]):
	// "tc#p#" + principal + "#" + shard, or "tc#a#" + shard for anonymous
	// callers.
	TaskCountKeyPrefix = "tc#"
	// TaskStatusAttribute (S) is TaskRecord.Status, for people reading
	// the table; the Store conditions on [VersionAttribute] alone.
	TaskStatusAttribute = "st"
	// TaskCountAttribute (S) of a task item is the PartitionKey of the
	// task-count item that counts it; absent when Create had no limit.
	TaskCountAttribute = "tc"
	// TaskEntriesAttribute (M) of a task-count item maps each counted task
	// id to its Expires (N, Unix ms) as of Create.
	TaskEntriesAttribute = "tasks"
	// TaskChargesAttribute (M) of a task-count item maps each counted task
	// id with a non-zero TaskRecord.Charge to it (N, bytes), for the
	// bound of a principal's task bytes.
	TaskChargesAttribute = "charges"

	// MaxItemBytes is DynamoDB's item size limit, 400 KB: the sum of the
	// lengths of the attribute names and values. A task record whose item
	// would exceed it is refused with core.ErrTaskTooLarge before any
	// write.
	MaxItemBytes = 400 << 10
)

// A task item:
//
//	pk    S  "t#" + TaskRecord.ID
//	ver   N  TaskRecord.Version
//	exp   N  TaskRecord.Expires, Unix ms (every operation compares it with the clock)
//	ttl   N  TaskRecord.Expires, Unix s rounded up (the table's time to live)
//	st    S  TaskRecord.Status
//	prn   S  TaskRecord.Principal (absent for anonymous tasks)
//	tc    S  the task-count item counting the task (absent without a limit)
//	wid   S  random token of the last write (see the package doc, Retries)
//	data  B  the whole TaskRecord as JSON (its field tags), Version aside
//
// A task-count item:
//
//	pk     S  "tc#" + pool + "#" + shard
//	ver    N  optimistic-concurrency counter
//	tasks  M  task id -> Expires (N, Unix ms) of the unexpired tasks counted
//	charges M task id -> Charge (N, bytes) of those with a charge (always present)
//	ttl    N  the latest of those expiries, Unix s rounded up
//	wid    S  random token of the last write

func taskKey(id string) attrs { return attrs{PartitionKey: attrS(TaskKeyPrefix + id)} }

// encodeTask returns the item that stores rec at version, counted by the
// task-count item countKey ("" for none).
func encodeTask(rec *core.TaskRecord, version int64, wid, countKey string) (attrs, error) {
	r := *rec
	r.Version = 0 // VersionAttribute is authoritative
	data, err := json.Marshal(&r)
	if err != nil {
		return nil, fmt.Errorf("encoding the record: %w", err)
	}
	it := attrs{
		PartitionKey:        attrS(TaskKeyPrefix + rec.ID),
		VersionAttribute:    attrN(version),
		ExpiresAttribute:    attrN(rec.Expires.UnixMilli()),
		TTLAttribute:        attrN(ttlSeconds(rec.Expires)),
		TaskStatusAttribute: attrS(string(rec.Status)),
		WriteAttribute:      attrS(wid),
		DataAttribute:       &types.AttributeValueMemberB{Value: data},
	}
	if rec.Principal != "" {
		it[PrincipalAttribute] = attrS(rec.Principal)
	}
	if countKey != "" {
		it[TaskCountAttribute] = attrS(countKey)
	}
	return it, nil
}

// storedTask is a decoded task item.
type storedTask struct {
	rec      *core.TaskRecord
	expires  int64 // Unix ms
	wid      string
	countKey string
}

func (s *storedTask) live(now time.Time) bool { return now.UnixMilli() < s.expires }

// decodeTask reads a task item. It returns an error naming the attribute
// for an item this package did not write as a task, a session item among
// them.
func decodeTask(it attrs) (*storedTask, error) {
	pk, err := getS(it, PartitionKey, true)
	if err != nil {
		return nil, err
	}
	id, ok := strings.CutPrefix(pk, TaskKeyPrefix)
	if !ok || id == "" {
		return nil, fmt.Errorf("malformed item: %s %q lacks the prefix %q", PartitionKey, pk, TaskKeyPrefix)
	}
	ver, err := getN(it, VersionAttribute)
	if err != nil {
		return nil, err
	}
	exp, err := getN(it, ExpiresAttribute)
	if err != nil {
		return nil, err
	}
	wid, err := getS(it, WriteAttribute, false)
	if err != nil {
		return nil, err
	}
	countKey, err := getS(it, TaskCountAttribute, false)
	if err != nil {
		return nil, err
	}
	v, ok := it[DataAttribute]
	if !ok {
		return nil, fmt.Errorf("malformed item: no %s", DataAttribute)
	}
	b, ok := v.(*types.AttributeValueMemberB)
	if !ok {
		return nil, fmt.Errorf("malformed item: %s is %s, want B", DataAttribute, typeName(v))
	}
	rec := new(core.TaskRecord)
	if err := json.Unmarshal(b.Value, rec); err != nil {
		return nil, fmt.Errorf("malformed item: %s is not a task record: %v", DataAttribute, err)
	}
	if rec.ID != id {
		return nil, fmt.Errorf("malformed item: %s holds task %q, its key names %q", DataAttribute, rec.ID, id)
	}
	rec.Version = ver
	return &storedTask{rec: rec, expires: exp, wid: wid, countKey: countKey}, nil
}

// taskCount is a decoded task-count item.
type taskCount struct {
	version int64
	wid     string
	entries map[string]int64 // task id -> Expires, Unix ms
	charges map[string]int64 // task id -> Charge, bytes (non-zero only)
}

func encodeTaskCount(key string, c *taskCount) attrs {
	m := make(map[string]types.AttributeValue, len(c.entries))
	ch := make(map[string]types.AttributeValue, len(c.charges))
	var latest int64
	for id, exp := range c.entries {
		m[id] = attrN(exp)
		latest = max(latest, exp)
		if n := c.charges[id]; n != 0 {
			ch[id] = attrN(n)
		}
	}
	return attrs{
		PartitionKey:         attrS(key),
		VersionAttribute:     attrN(c.version),
		WriteAttribute:       attrS(c.wid),
		TaskEntriesAttribute: &types.AttributeValueMemberM{Value: m},
		TaskChargesAttribute: &types.AttributeValueMemberM{Value: ch},
		TTLAttribute:         attrN(ttlSeconds(time.UnixMilli(latest))),
	}
}

func decodeTaskCount(it attrs) (*taskCount, error) {
	pk, err := getS(it, PartitionKey, true)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(pk, TaskCountKeyPrefix) {
		return nil, fmt.Errorf("malformed item: %s %q lacks the prefix %q", PartitionKey, pk, TaskCountKeyPrefix)
	}
	ver, err := getN(it, VersionAttribute)
	if err != nil {
		return nil, err
	}
	wid, err := getS(it, WriteAttribute, false)
	if err != nil {
		return nil, err
	}
	c := &taskCount{version: ver, wid: wid}
	if c.entries, err = getNumberMap(it, TaskEntriesAttribute); err != nil {
		return nil, err
	}
	if c.charges, err = getNumberMap(it, TaskChargesAttribute); err != nil {
		return nil, err
	}
	return c, nil
}

// getNumberMap reads the M attribute name of integers (empty when absent).
func getNumberMap(it attrs, name string) (map[string]int64, error) {
	out := map[string]int64{}
	v, ok := it[name]
	if !ok {
		return out, nil
	}
	m, ok := v.(*types.AttributeValueMemberM)
	if !ok {
		return nil, fmt.Errorf("malformed item: %s is %s, want M", name, typeName(v))
	}
	for _, id := range slices.Sorted(maps.Keys(m.Value)) {
		n, ok := m.Value[id].(*types.AttributeValueMemberN)
		if !ok {
			return nil, fmt.Errorf("malformed item: %s[%q] is %s, want N", name, id, typeName(m.Value[id]))
		}
		x, err := strconv.ParseInt(n.Value, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("malformed item: %s[%q] %q is not an integer", name, id, n.Value)
		}
		out[id] = x
	}
	return out, nil
}

// itemSize is the size DynamoDB charges an item and compares with
// MaxItemBytes: the UTF-8 lengths of the attribute names and values. A
// number counts as its decimal string, which is at least its stored size.
func itemSize(it attrs) int {
	n := 0
	for name, v := range it {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return len(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += len(k) + valueSize(e) + 1
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += valueSize(e) + 1
		}
		return n
	}
	return 0
}
