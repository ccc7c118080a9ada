package dynamo_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/mcp"
	"github.com/mcpfn/mcpfn/store/dynamo"
	"github.com/mcpfn/mcpfn/store/storetest"
)

func newTaskStore(t *testing.T, client dynamo.Client, table string, opts *dynamo.Options) *dynamo.TaskStore {
	t.Helper()
	s, err := dynamo.NewTaskStore(client, withTable(table, opts))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// taskRecord returns a working task of principal that expires in an hour.
func taskRecord(principal string) *core.TaskRecord {
	now := time.Now().Truncate(time.Millisecond)
	return &core.TaskRecord{ID: storetest.NewID(), Principal: principal, Method: "tools/call", Name: "slow",
		Arguments: json.RawMessage(`{"n":1}`), ProtocolVersion: "2026-07-28", Status: mcp.TaskWorking,
		Created: now, Updated: now, Expires: now.Add(time.Hour)}
}

// rawItem reads the item of key pk as stored.
func rawItem(t *testing.T, client *dynamodb.Client, table, pk string) map[string]types.AttributeValue {
	t.Helper()
	out, err := client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &table,
		Key: map[string]types.AttributeValue{dynamo.PartitionKey: &types.AttributeValueMemberS{Value: pk}}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

// TestTaskCallBudget checks the DynamoDB calls of each TaskStore operation
// and that every read is strongly consistent (tasks.md §Task Creation: a
// task is returned only once tasks/get resolves, on any instance).
func TestTaskCallBudget(t *testing.T) {
	ctx, client, table := tableTest(t)
	for _, emulate := range []bool{true, false} {
		c := &counter{Client: client, emulateOldItem: emulate, allRead: true}
		s := newTaskStore(t, c, table, nil)
		k := callCheck{t, c}
		check := k.check
		principal := "budget-" + storetest.NewID()
		r := taskRecord(principal)
		if err := s.Create(ctx, r, core.TaskLimits{Tasks: 0}); err != nil || r.Version != 1 {
			t.Fatalf("Create = %v, version %d", err, r.Version)
		}
		check("Create without a limit", map[string]int{"PutItem": 1})
		r2 := taskRecord(principal)
		if err := s.Create(ctx, r2, core.TaskLimits{Tasks: 2}); err != nil {
			t.Fatal(err)
		}
		check("Create with a limit", map[string]int{"GetItem": 1, "PutItem": 2})
		if err := s.Create(ctx, taskRecord(principal), core.TaskLimits{Tasks: 2}); err != nil {
			t.Fatal(err)
		}
		check("Create with a limit, count item present", map[string]int{"GetItem": 1, "PutItem": 2})
		if err := s.Create(ctx, taskRecord(principal), core.TaskLimits{Tasks: 2}); !errors.Is(err, core.ErrTaskLimit) {
			t.Fatalf("Create over the limit = %v, want ErrTaskLimit", err)
		}
		check("Create over the limit", map[string]int{"GetItem": 1})

		got, err := s.Get(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		check("Get", map[string]int{"GetItem": 1})
		stale := *got
		got.Status, got.StatusMessage = mcp.TaskCompleted, "done"
		got.Result = json.RawMessage(`{"content":[]}`)
		if got.Version != 1 {
			t.Fatalf("Get: Version %d, want 1", got.Version)
		}
		if err := s.Update(ctx, got); err != nil || got.Version != 2 {
			t.Fatalf("Update = %v, version %d", err, got.Version)
		}
		check("Update", map[string]int{"UpdateItem": 1})
		if err := s.Update(ctx, &stale); !errors.Is(err, core.ErrTaskConflict) {
			t.Fatalf("stale Update = %v, want ErrTaskConflict", err)
		}
		k.failedUpdate("Update that conflicts (old item returned)", "Update that conflicts (no old item returned)")
		missing := taskRecord(principal)
		missing.Version = 1
		if err := s.Update(ctx, missing); !errors.Is(err, core.ErrTaskNotFound) {
			t.Fatalf("Update(missing) = %v, want ErrTaskNotFound", err)
		}
		k.failedUpdate("Update of a missing task (old items known to be returned)", "Update of a missing task (no old item returned)")
		if _, err := s.Get(ctx, missing.ID); !errors.Is(err, core.ErrTaskNotFound) {
			t.Fatalf("Get(missing) = %v", err)
		}
		check("Get of a missing task", map[string]int{"GetItem": 1})
		k.consistentReads()
	}
}

// TestTaskRoundTrip checks that every field of a record survives a write
// and a read, the version is the store's, and the item has the documented
// attributes and none of PoolIndex's.
func TestTaskRoundTrip(t *testing.T) {
	ctx, client, table := tableTest(t)
	s := newTaskStore(t, client, table, nil)
	r := taskRecord("ann")
	r.Caller = &core.Principal{Subject: "ann"}
	r.ClientCapabilities = json.RawMessage(`{"elicitation":{}}`)
	r.ClientInfo = json.RawMessage(`{"name":"c","version":"1"}`)
	r.Status, r.StatusMessage = mcp.TaskInputRequired, "waiting for you"
	r.InputRequests = map[string]json.RawMessage{"k1": json.RawMessage(`{"method":"elicitation/create","params":{}}`)}
	r.InputKeys = map[string]string{"k1": "name"}
	r.InputResponses = map[string]json.RawMessage{}
	r.InputState = "st"
	r.Round = 2
	r.UsedKeys = []string{"k0", "k1"}
	r.Runner, r.LeaseExpires, r.CancelRequested = "run-1", r.Created.Add(30*time.Second), true
	if err := s.Create(ctx, r, core.TaskLimits{Tasks: 10}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(r)
	have, _ := json.Marshal(got)
	if string(want) != string(have) || got.Version != 1 {
		t.Fatalf("Get =\n%s\nwant\n%s", have, want)
	}
	it := rawItem(t, client, table, dynamo.TaskKeyPrefix+r.ID)
	for _, a := range []string{dynamo.PartitionKey, dynamo.VersionAttribute, dynamo.ExpiresAttribute, dynamo.TTLAttribute,
		dynamo.TaskStatusAttribute, dynamo.PrincipalAttribute, dynamo.WriteAttribute, dynamo.DataAttribute, dynamo.TaskCountAttribute} {
		if _, ok := it[a]; !ok {
			t.Errorf("the task item lacks %s", a)
		}
	}
	for _, a := range []string{dynamo.PoolAttribute, dynamo.LastUsedAttribute} {
		if _, ok := it[a]; ok {
			t.Errorf("the task item has %s: PoolIndex would list it", a)
		}
	}
	if st := it[dynamo.TaskStatusAttribute].(*types.AttributeValueMemberS).Value; st != "input_required" {
		t.Errorf("st = %q", st)
	}
	// An Update keeps the count attribute and replaces the rest.
	got.Status, got.InputRequests = mcp.TaskWorking, nil
	if err := s.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	it2 := rawItem(t, client, table, dynamo.TaskKeyPrefix+r.ID)
	if it2[dynamo.TaskCountAttribute] == nil || it2[dynamo.TaskCountAttribute].(*types.AttributeValueMemberS).Value != it[dynamo.TaskCountAttribute].(*types.AttributeValueMemberS).Value {
		t.Errorf("Update changed the count attribute: %v -> %v", it[dynamo.TaskCountAttribute], it2[dynamo.TaskCountAttribute])
	}
	again, err := s.Get(ctx, r.ID)
	if err != nil || again.Status != mcp.TaskWorking || again.InputRequests != nil || again.Version != 2 {
		t.Fatalf("Get after Update = %+v, %v", again, err)
	}
}

// TestTasksAndSessionsShareTheTable checks the key scheme: a task and a
// session with the same id are two items; neither operation ever reads,
// changes, evicts or lists the other's items; an item of one kind stored
// under the other's key reads as malformed, never as a record.
func TestTasksAndSessionsShareTheTable(t *testing.T) {
	ctx, client, table := tableTest(t)
	sessions := newStore(t, client, table, nil)
	tasks := newTaskStore(t, client, table, nil)
	const principal = "shared-principal"

	// One id, two items.
	tr := taskRecord(principal)
	sr := &core.SessionRecord{ID: tr.ID, Principal: principal, Data: []byte(`{"v":"s"}`), LastUsed: time.Now(), Expires: time.Now().Add(time.Hour)}
	if err := tasks.Create(ctx, tr, core.TaskLimits{Tasks: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := sessions.Create(ctx, sr, core.SessionLimits{PerPrincipal: 1}); err != nil {
		t.Fatal(err)
	}
	gs, err := sessions.Get(ctx, tr.ID)
	if err != nil || string(gs.Data) != `{"v":"s"}` {
		t.Fatalf("session Get = %+v, %v", gs, err)
	}
	gt, err := tasks.Get(ctx, tr.ID)
	if err != nil || gt.Name != "slow" {
		t.Fatalf("task Get = %+v, %v", gt, err)
	}

	// A full session pool of the same principal evicts sessions, never
	// tasks: PoolIndex does not list task items.
	for range 3 {
		if _, err := sessions.Create(ctx, session(principal, time.Now()), core.SessionLimits{PerPrincipal: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sessions.Get(ctx, sr.ID); !errors.Is(err, core.ErrSessionNotFound) {
		t.Fatalf("the first session was not evicted: %v", err)
	}
	if _, err := tasks.Get(ctx, tr.ID); err != nil {
		t.Fatalf("evicting sessions removed the task: %v", err)
	}
	out, err := client.Query(ctx, &dynamodb.QueryInput{TableName: &table, IndexName: aws.String(dynamo.PoolIndex),
		KeyConditionExpression:    aws.String("#pool = :pool"),
		ExpressionAttributeNames:  map[string]string{"#pool": dynamo.PoolAttribute},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pool": &types.AttributeValueMemberS{Value: "p#" + principal}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Items) != 1 {
		t.Errorf("PoolIndex lists %d items of the principal's pool, want its 1 session", len(out.Items))
	}
	for _, it := range out.Items {
		if pk := it[dynamo.PartitionKey].(*types.AttributeValueMemberS).Value; !strings.HasPrefix(pk, dynamo.KeyPrefix) {
			t.Errorf("PoolIndex lists %s", pk)
		}
	}

	// Deleting a session with the task's id leaves the task alone, and a
	// task update leaves a session of that id alone.
	sr2 := &core.SessionRecord{ID: tr.ID, Data: []byte(`{}`), LastUsed: time.Now(), Expires: time.Now().Add(time.Hour)}
	if _, err := sessions.Create(ctx, sr2, core.SessionLimits{}); err != nil {
		t.Fatal(err)
	}
	gt.StatusMessage = "updated"
	if err := tasks.Update(ctx, gt); err != nil {
		t.Fatal(err)
	}
	if got, err := sessions.Get(ctx, tr.ID); err != nil || got.Version != 1 {
		t.Fatalf("session after a task Update: %+v, %v", got, err)
	}
	if err := sessions.Delete(ctx, tr.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := tasks.Get(ctx, tr.ID); err != nil || got.StatusMessage != "updated" {
		t.Fatalf("task after the session's Delete: %+v, %v", got, err)
	}

	// Cross-reading: a session item under a task's key, a task item under
	// a session's key. Each reads as a malformed item, not as a record.
	id := storetest.NewID()
	s3 := session(principal, time.Now())
	if _, err := sessions.Create(ctx, s3, core.SessionLimits{}); err != nil {
		t.Fatal(err)
	}
	sessionItem := rawItem(t, client, table, dynamo.KeyPrefix+s3.ID)
	taskItem := rawItem(t, client, table, dynamo.TaskKeyPrefix+tr.ID)
	put := func(pk string, it map[string]types.AttributeValue) {
		t.Helper()
		c := make(map[string]types.AttributeValue, len(it))
		for k, v := range it {
			c[k] = v
		}
		c[dynamo.PartitionKey] = &types.AttributeValueMemberS{Value: pk}
		if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: c}); err != nil {
			t.Fatal(err)
		}
	}
	put(dynamo.TaskKeyPrefix+id, sessionItem)
	if got, err := tasks.Get(ctx, id); err == nil || !strings.Contains(err.Error(), "malformed item") {
		t.Errorf("task Get of a session item = %+v, %v; want a malformed-item error", got, err)
	}
	put(dynamo.KeyPrefix+id, taskItem)
	if got, err := sessions.Get(ctx, id); err == nil || !strings.Contains(err.Error(), "malformed item") {
		t.Errorf("session Get of a task item = %+v, %v; want a malformed-item error", got, err)
	}
	// A task item copied under another task's key names another task.
	other := storetest.NewID()
	put(dynamo.TaskKeyPrefix+other, taskItem)
	if got, err := tasks.Get(ctx, other); err == nil || !strings.Contains(err.Error(), "holds task") {
		t.Errorf("task Get of another task's item = %+v, %v; want a malformed-item error", got, err)
	}
}

// TestTaskSizeLimit checks that a record past DynamoDB's item limit is
// refused with ErrTaskTooLarge before any write (its count is not taken),
// that one just under it is stored and read back whole, and that an
// Update past the limit changes nothing.
func TestTaskSizeLimit(t *testing.T) {
	ctx, client, table := tableTest(t)
	c := &counter{Client: client}
	s := newTaskStore(t, c, table, nil)
	big := func(n int) json.RawMessage { return json.RawMessage(`{"s":"` + strings.Repeat("x", n) + `"}`) }

	over := taskRecord("sam")
	over.Arguments = big(dynamo.MaxItemBytes)
	err := s.Create(ctx, over, core.TaskLimits{Tasks: 1})
	if !errors.Is(err, core.ErrTaskTooLarge) || !strings.Contains(err.Error(), "409600") {
		t.Fatalf("Create of an oversized record = %v, want ErrTaskTooLarge naming the limit", err)
	}
	if calls := c.take(); len(calls) != 0 {
		t.Errorf("an oversized Create called DynamoDB: %v", calls)
	}
	// The limit of 1 is still free.
	under := taskRecord("sam")
	under.Arguments = big(dynamo.MaxItemBytes - 2000)
	if err := s.Create(ctx, under, core.TaskLimits{Tasks: 1}); err != nil {
		t.Fatalf("Create just under the limit: %v", err)
	}
	got, err := s.Get(ctx, under.ID)
	if err != nil || string(got.Arguments) != string(under.Arguments) {
		t.Fatalf("Get of a large record: %v (%d bytes of arguments)", err, len(got.Arguments))
	}
	got.Result = big(dynamo.MaxItemBytes)
	got.Status = mcp.TaskCompleted
	if err := s.Update(ctx, got); !errors.Is(err, core.ErrTaskTooLarge) || got.Version != 1 {
		t.Fatalf("oversized Update = %v (version %d), want ErrTaskTooLarge", err, got.Version)
	}
	if again, err := s.Get(ctx, under.ID); err != nil || again.Status != mcp.TaskWorking || again.Version != 1 {
		t.Fatalf("after a refused Update: %+v, %v", again, err)
	}
}

// TestTaskLimitIsAtomic checks that concurrent Creates of one principal on
// several TaskStores (instances) never exceed the limit, with one count
// item and with several shards.
func TestTaskLimitIsAtomic(t *testing.T) {
	_, client, table := tableTest(t)
	for _, tc := range []struct {
		name             string
		limit, shardSize int
		maxOK            int
	}{
		{"one count item", 5, 0, 5},
		{"three shards", 9, 3, 9}, // 3 shards of 3
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stores := []*dynamo.TaskStore{
				newTaskStore(t, client, table, &dynamo.Options{TaskShardSize: tc.shardSize}),
				newTaskStore(t, client, table, &dynamo.Options{TaskShardSize: tc.shardSize}),
			}
			principal := "flood-" + storetest.NewID()
			const n = 24
			errs := make([]error, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Go(func() {
					<-start
					errs[i] = stores[i%2].Create(context.Background(), taskRecord(principal), core.TaskLimits{Tasks: tc.limit})
				})
			}
			close(start)
			wg.Wait()
			ok := 0
			for _, err := range errs {
				switch {
				case err == nil:
					ok++
				case !errors.Is(err, core.ErrTaskLimit):
					t.Errorf("Create = %v, want nil or ErrTaskLimit", err)
				}
			}
			if ok > tc.maxOK || ok == 0 {
				t.Fatalf("%d of %d concurrent Creates succeeded, limit %d", ok, n, tc.limit)
			}
			if tc.shardSize == 0 && ok != tc.limit {
				t.Fatalf("%d Creates succeeded, want exactly the limit %d", ok, tc.limit)
			}
			// Another principal is not affected.
			if err := stores[0].Create(context.Background(), taskRecord("other-"+principal), core.TaskLimits{Tasks: tc.limit}); err != nil {
				t.Fatalf("another principal's Create: %v", err)
			}
		})
	}
}

// TestTaskExpiry checks that an expired task is absent for Get and Update
// while its item is still stored, that it no longer counts against the
// limit, and that its id can be used again.
func TestTaskExpiry(t *testing.T) {
	ctx, client, table := tableTest(t)
	clk := newTestClock()
	s := newTaskStore(t, client, table, nil)
	dynamo.SetTaskNow(s, clk.Now)

	r := taskRecord("eve")
	r.Expires = clk.Now().Add(1500 * time.Millisecond)
	if err := s.Create(ctx, r, core.TaskLimits{Tasks: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, taskRecord("eve"), core.TaskLimits{Tasks: 1}); !errors.Is(err, core.ErrTaskLimit) {
		t.Fatalf("second Create = %v, want ErrTaskLimit", err)
	}
	clk.Advance(1499 * time.Millisecond)
	if _, err := s.Get(ctx, r.ID); err != nil {
		t.Fatalf("Get 1ms before expiry: %v", err)
	}
	clk.Advance(time.Millisecond)
	if _, err := s.Get(ctx, r.ID); !errors.Is(err, core.ErrTaskNotFound) {
		t.Fatalf("Get at expiry = %v, want ErrTaskNotFound", err)
	}
	if rawItem(t, client, table, dynamo.TaskKeyPrefix+r.ID) == nil {
		t.Fatal("the expired item is gone: the test needs it stored")
	}
	upd := *r
	upd.Status = mcp.TaskFailed
	if err := s.Update(ctx, &upd); !errors.Is(err, core.ErrTaskNotFound) {
		t.Fatalf("Update of an expired task = %v, want ErrTaskNotFound", err)
	}
	// The expired task no longer counts.
	next := taskRecord("eve")
	next.Expires = clk.Now().Add(time.Hour)
	if err := s.Create(ctx, next, core.TaskLimits{Tasks: 1}); err != nil {
		t.Fatalf("Create after the expiry: %v", err)
	}
	// Its id can be used again (by anyone: ids are random, a reuse is a
	// new task).
	again := taskRecord("")
	again.ID = r.ID
	again.Expires = clk.Now().Add(time.Hour)
	if err := s.Create(ctx, again, core.TaskLimits{Tasks: 0}); err != nil {
		t.Fatalf("Create over an expired item: %v", err)
	}
	if got, err := s.Get(ctx, r.ID); err != nil || got.Principal != "" || got.Version != 1 {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	// A live id is in use.
	dup := taskRecord("")
	dup.ID = r.ID
	if err := s.Create(ctx, dup, core.TaskLimits{Tasks: 0}); !errors.Is(err, core.ErrTaskConflict) {
		t.Fatalf("Create over a live task = %v, want ErrTaskConflict", err)
	}
}

// TestTaskCreateConflictReleasesCount checks that a Create refused because
// its id is in use takes its count back.
func TestTaskCreateConflictReleasesCount(t *testing.T) {
	ctx, client, table := tableTest(t)
	s := newTaskStore(t, client, table, nil)
	a := taskRecord("") // anonymous, uncounted
	if err := s.Create(ctx, a, core.TaskLimits{Tasks: 0}); err != nil {
		t.Fatal(err)
	}
	dup := taskRecord("kim")
	dup.ID = a.ID
	if err := s.Create(ctx, dup, core.TaskLimits{Tasks: 1}); !errors.Is(err, core.ErrTaskConflict) {
		t.Fatalf("Create over a live id = %v, want ErrTaskConflict", err)
	}
	if err := s.Create(ctx, taskRecord("kim"), core.TaskLimits{Tasks: 1}); err != nil {
		t.Fatalf("the refused Create kept its count: %v", err)
	}
}

// TestTaskRetriedWriteThatLanded checks that Create (both its writes) and
// Update retried after their first attempt landed are recognised as done.
func TestTaskRetriedWriteThatLanded(t *testing.T) {
	ctx, client, table := tableTest(t)
	for _, limit := range []int{0, 3} {
		s := newTaskStore(t, &landedButFailed{Client: client}, table, &dynamo.Options{MaxAttempts: 3, MaxBackoff: 5 * time.Millisecond})
		r := taskRecord("leo")
		if err := s.Create(ctx, r, core.TaskLimits{Tasks: limit}); err != nil {
			t.Fatalf("limit %d: Create retried after landing: %v", limit, err)
		}
		r.StatusMessage = "half way"
		if err := s.Update(ctx, r); err != nil {
			t.Fatalf("Update retried after landing: %v", err)
		}
		got, err := s.Get(ctx, r.ID)
		if err != nil || got.Version != 2 || r.Version != 2 || got.StatusMessage != "half way" {
			t.Fatalf("Get = %+v, %v; caller's Version %d; want version 2", got, err, r.Version)
		}
	}
}

// TestTaskMalformedItems checks that task and count items this package did
// not write give errors, not panics.
func TestTaskMalformedItems(t *testing.T) {
	ctx, client, table := tableTest(t)
	s := newTaskStore(t, client, table, nil)
	S, N, B := attrS, attrN, attrB
	future := N("99999999999999")
	for _, tc := range []struct {
		name string
		item map[string]types.AttributeValue
		want string
	}{
		{"no version", map[string]types.AttributeValue{dynamo.ExpiresAttribute: future, dynamo.DataAttribute: B(`{}`)}, "no ver"},
		{"no data", map[string]types.AttributeValue{dynamo.VersionAttribute: N("1"), dynamo.ExpiresAttribute: future}, "no data"},
		{"data not JSON", map[string]types.AttributeValue{dynamo.VersionAttribute: N("1"), dynamo.ExpiresAttribute: future, dynamo.DataAttribute: B(`{`)}, "not a task record"},
		{"data is S", map[string]types.AttributeValue{dynamo.VersionAttribute: N("1"), dynamo.ExpiresAttribute: future, dynamo.DataAttribute: S(`{}`)}, "want B"},
		{"another task's data", map[string]types.AttributeValue{dynamo.VersionAttribute: N("1"), dynamo.ExpiresAttribute: future, dynamo.DataAttribute: B(`{"id":"other"}`)}, "holds task"},
	} {
		id := storetest.NewID()
		tc.item[dynamo.PartitionKey] = S(dynamo.TaskKeyPrefix + id)
		if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: tc.item}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, id); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Get = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	// A malformed count item fails Create, naming it.
	r := taskRecord("mal")
	if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: map[string]types.AttributeValue{
		dynamo.PartitionKey: S(dynamo.TaskCountKeyPrefix + "p#mal#0"), dynamo.VersionAttribute: N("1"), dynamo.TaskEntriesAttribute: S("x")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, r, core.TaskLimits{Tasks: 5}); err == nil || !strings.Contains(err.Error(), "malformed item") {
		t.Errorf("Create with a malformed count item = %v", err)
	}
}

// TestTaskStoreSuite runs storetest.RunTasks, each case on a table of its
// own, with DynamoDB's item limit.
func TestTaskStoreSuite(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	storetest.RunTasks(t, func(t *testing.T) core.TaskStore {
		return newTaskStore(t, client, newTable(t, client), nil)
	}, dynamo.MaxItemBytes)
}

// TestNewTaskStoreRejectsBadOptions: a task-count item must fit in an
// item, and the Store's own options are checked too.
func TestNewTaskStoreRejectsBadOptions(t *testing.T) {
	t.Parallel()
	client := dynamodb.New(dynamodb.Options{Region: "us-east-1"})
	for _, o := range []dynamo.Options{{TaskShardSize: -1}, {TaskShardSize: dynamo.MaxTaskShardSize + 1}, {TableName: "x"}, {MaxAttempts: -1}} {
		if s, err := dynamo.NewTaskStore(client, &o); err == nil {
			t.Errorf("NewTaskStore(%+v) = %v, want an error", o, s)
		}
	}
	if _, err := dynamo.NewTaskStore(client, &dynamo.Options{TaskShardSize: dynamo.MaxTaskShardSize}); err != nil {
		t.Errorf("TaskShardSize at its maximum: %v", err)
	}
}
