package dynamo_test

// These tests run against a DynamoDB-compatible server (dynalite) named by
// MCPFN_DYNAMODB_ENDPOINT; test/dynalite/start.sh starts one. Without it they
// skip, unless MCPFN_REQUIRE_DYNAMO=1.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/internal/testenv"
	"github.com/mcpfn/mcpfn/store/dynamo"
	"github.com/mcpfn/mcpfn/store/storetest"
)

// newClient returns a real DynamoDB client pointed at the test endpoint, or
// skips the test.
func newClient(t *testing.T) *dynamodb.Client {
	t.Helper()
	ep := testenv.DynamoEndpoint(t)
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(ep),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "test-secret", Source: "test"}, nil
		}),
	})
}

// newTable creates a table with a unique name, deleted when the test ends.
func newTable(t *testing.T, client *dynamodb.Client) string {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	name := "mcpfn-test-" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := dynamo.CreateTable(ctx, client, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	return name
}

// tableTest marks t parallel and returns a context, a client and a table
// of its own for it.
func tableTest(t *testing.T) (context.Context, *dynamodb.Client, string) {
	t.Helper()
	t.Parallel()
	client := newClient(t)
	return context.Background(), client, newTable(t, client)
}

// withTable returns a copy of opts (nil for the defaults) naming table.
func withTable(table string, opts *dynamo.Options) *dynamo.Options {
	var o dynamo.Options
	if opts != nil {
		o = *opts
	}
	o.TableName = table
	return &o
}

func newStore(t *testing.T, client dynamo.Client, table string, opts *dynamo.Options) *dynamo.Store {
	t.Helper()
	s, err := dynamo.New(client, withTable(table, opts))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Attribute values of each type, for items written by hand.
func attrS(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func attrN(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
func attrB(v string) types.AttributeValue { return &types.AttributeValueMemberB{Value: []byte(v)} }

// testClock is a clock the test steps by hand; it is safe for concurrent
// use.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock { return &testClock{now: time.Now()} }

// Now returns the clock's time.
func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock d forward.
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestStore(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	storetest.Run(t, func(t *testing.T) core.SessionStore {
		return newStore(t, client, newTable(t, client), nil)
	})
}

// counter wraps a Client and counts the calls per operation. With
// emulateOldItem, it fills in the old item of a ConditionalCheckFailed
// answer as DynamoDB does for ReturnValuesOnConditionCheckFailure=ALL_OLD
// (dynalite ignores the parameter), with a read of its own, not counted.
type counter struct {
	dynamo.Client
	emulateOldItem bool

	mu      sync.Mutex
	calls   map[string]int
	allRead bool // every GetItem was strongly consistent
}

func (c *counter) count(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[op]++
}

func (c *counter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.calls
	c.calls = nil
	return m
}

func (c *counter) oldItem(ctx context.Context, err error, rv types.ReturnValuesOnConditionCheckFailure, table *string, key map[string]types.AttributeValue) error {
	var ccf *types.ConditionalCheckFailedException
	if !c.emulateOldItem || rv != types.ReturnValuesOnConditionCheckFailureAllOld || !errors.As(err, &ccf) || len(ccf.Item) > 0 {
		return err
	}
	out, gerr := c.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: key, ConsistentRead: aws.Bool(true)})
	if gerr != nil {
		return gerr
	}
	ccf.Item = out.Item
	return err
}

func (c *counter) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.count("GetItem")
	if in.ConsistentRead == nil || !*in.ConsistentRead {
		c.mu.Lock()
		c.allRead = false
		c.mu.Unlock()
	}
	return c.Client.GetItem(ctx, in, o...)
}

func (c *counter) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.count("PutItem")
	out, err := c.Client.PutItem(ctx, in, o...)
	return out, c.oldItem(ctx, err, in.ReturnValuesOnConditionCheckFailure, in.TableName, map[string]types.AttributeValue{dynamo.PartitionKey: in.Item[dynamo.PartitionKey]})
}

func (c *counter) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.count("UpdateItem")
	out, err := c.Client.UpdateItem(ctx, in, o...)
	return out, c.oldItem(ctx, err, in.ReturnValuesOnConditionCheckFailure, in.TableName, in.Key)
}

func (c *counter) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	c.count("DeleteItem")
	out, err := c.Client.DeleteItem(ctx, in, o...)
	return out, c.oldItem(ctx, err, in.ReturnValuesOnConditionCheckFailure, in.TableName, in.Key)
}

func (c *counter) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.count("Query")
	return c.Client.Query(ctx, in, o...)
}

func session(principal string, lastUsed time.Time) *core.SessionRecord {
	return &core.SessionRecord{ID: storetest.NewID(), Principal: principal, Data: []byte(`{}`),
		LastUsed: lastUsed, Expires: time.Now().Add(time.Hour)}
}

// callCheck checks the calls a counter took since the previous check.
type callCheck struct {
	t *testing.T
	c *counter
}

// check fails the test unless the calls since the previous check are want;
// what says what was done.
func (k callCheck) check(what string, want map[string]int) {
	k.t.Helper()
	if got := k.c.take(); !sameCalls(got, want) {
		k.t.Errorf("emulateOldItem=%v: %s: calls %v, want %v", k.c.emulateOldItem, what, got, want)
	}
}

// failedUpdate checks the calls of an Update its condition refused: one
// UpdateItem when the old item comes with the refusal (withOld names the
// case), and a GetItem too when it does not (withoutOld).
func (k callCheck) failedUpdate(withOld, withoutOld string) {
	k.t.Helper()
	if k.c.emulateOldItem {
		k.check(withOld, map[string]int{"UpdateItem": 1})
	} else {
		k.check(withoutOld, map[string]int{"UpdateItem": 1, "GetItem": 1})
	}
}

// consistentReads fails the test unless every GetItem the counter saw
// was strongly consistent.
func (k callCheck) consistentReads() {
	k.t.Helper()
	if !k.c.allRead {
		k.t.Error("a GetItem was not strongly consistent")
	}
}

func sameCalls(got, want map[string]int) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// TestCallBudget checks the number of DynamoDB calls of each operation, as
// documented in the package doc.
func TestCallBudget(t *testing.T) {
	ctx, client, table := tableTest(t)

	for _, emulate := range []bool{true, false} {
		c := &counter{Client: client, emulateOldItem: emulate, allRead: true}
		s := newStore(t, c, table, nil)
		lim := core.SessionLimits{PerPrincipal: 2, Anonymous: 100}
		base := time.Now().Add(-time.Minute)
		principal := "budget-" + storetest.NewID()
		k := callCheck{t, c}
		check := k.check

		a := session(principal, base)
		if _, err := s.Create(ctx, a, core.SessionLimits{}); err != nil {
			t.Fatal(err)
		}
		check("Create without a limit", map[string]int{"PutItem": 1})
		b := session(principal, base.Add(time.Second))
		if ev, err := s.Create(ctx, b, lim); err != nil || len(ev) != 0 {
			t.Fatalf("Create = %v, %v", ev, err)
		}
		check("Create under the limit", map[string]int{"PutItem": 1, "Query": 1})
		n := session(principal, base.Add(2*time.Second))
		if ev, err := s.Create(ctx, n, lim); err != nil || len(ev) != 1 || ev[0] != a.ID {
			t.Fatalf("Create = %v, %v; want [%s] evicted", ev, err, a.ID)
		}
		check("Create over the limit (one eviction)", map[string]int{"PutItem": 1, "Query": 1, "DeleteItem": 1})

		got, err := s.Get(ctx, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		check("Get", map[string]int{"GetItem": 1})
		if _, err := s.Get(ctx, a.ID); !errors.Is(err, core.ErrSessionNotFound) {
			t.Fatalf("Get(evicted) = %v", err)
		}
		check("Get of a missing session", map[string]int{"GetItem": 1})

		stale := *got
		got.Data = []byte(`{"n":1}`)
		if err := s.Update(ctx, got); err != nil {
			t.Fatal(err)
		}
		check("Update", map[string]int{"UpdateItem": 1})
		if err := s.Update(ctx, &stale); !errors.Is(err, core.ErrSessionConflict) {
			t.Fatalf("stale Update = %v, want ErrSessionConflict", err)
		}
		k.failedUpdate("Update that conflicts (old item returned)", "Update that conflicts (no old item returned)")
		missing := session(principal, base)
		missing.Version = 1
		if err := s.Update(ctx, missing); !errors.Is(err, core.ErrSessionNotFound) {
			t.Fatalf("Update(missing) = %v, want ErrSessionNotFound", err)
		}
		k.failedUpdate("Update of a missing session (old items known to be returned)", "Update of a missing session (no old item returned)")

		if err := s.Delete(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
		check("Delete", map[string]int{"DeleteItem": 1})
		if err := s.Delete(ctx, b.ID); !errors.Is(err, core.ErrSessionNotFound) {
			t.Fatalf("second Delete = %v", err)
		}
		check("Delete of a missing session", map[string]int{"DeleteItem": 1})
		k.consistentReads()
	}
}

// TestExpiredItemsAreAbsent checks that an item whose expiry has passed is
// absent for every operation while it is still stored (dynalite never
// deletes expired items; DynamoDB does so late).
func TestExpiredItemsAreAbsent(t *testing.T) {
	ctx, client, table := tableTest(t)
	clk := newTestClock()
	s := newStore(t, client, table, nil)
	dynamo.SetNow(s, clk.Now)
	lim := core.SessionLimits{PerPrincipal: 2}

	r := &core.SessionRecord{ID: storetest.NewID(), Principal: "ivan", Data: []byte(`{}`),
		LastUsed: clk.Now(), Expires: clk.Now().Add(1500 * time.Millisecond)}
	if _, err := s.Create(ctx, r, lim); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, r.ID); err != nil {
		t.Fatalf("Get before expiry: %v", err)
	}
	clk.Advance(1499 * time.Millisecond)
	if _, err := s.Get(ctx, r.ID); err != nil {
		t.Fatalf("Get 1ms before expiry: %v", err)
	}
	clk.Advance(time.Millisecond)

	stored := func() bool { return len(rawItem(t, client, table, dynamo.KeyPrefix+r.ID)) > 0 }
	if !stored() {
		t.Fatal("the expired item is gone: the test needs it stored")
	}
	if _, err := s.Get(ctx, r.ID); !errors.Is(err, core.ErrSessionNotFound) {
		t.Fatalf("Get at expiry = %v, want ErrSessionNotFound", err)
	}
	upd := *r
	upd.Expires = clk.Now().Add(time.Hour)
	if err := s.Update(ctx, &upd); !errors.Is(err, core.ErrSessionNotFound) {
		t.Fatalf("Update of an expired session = %v, want ErrSessionNotFound", err)
	}
	if err := s.Delete(ctx, r.ID); !errors.Is(err, core.ErrSessionNotFound) {
		t.Fatalf("Delete of an expired session = %v, want ErrSessionNotFound", err)
	}
	if !stored() {
		t.Fatal("a failed Update or Delete changed the stored item")
	}

	// The expired session does not count in its pool and is not reported
	// as evicted.
	for i := 0; i < 2; i++ {
		ev, err := s.Create(ctx, session("ivan", clk.Now()), lim)
		if err != nil || len(ev) != 0 {
			t.Fatalf("Create %d = %v, %v: the expired session counted", i, ev, err)
		}
	}
	// Its id can be used again.
	again := &core.SessionRecord{ID: r.ID, Data: []byte(`{"new":true}`), LastUsed: clk.Now(), Expires: clk.Now().Add(time.Hour)}
	if _, err := s.Create(ctx, again, core.SessionLimits{}); err != nil {
		t.Fatalf("Create over an expired item: %v", err)
	}
	got, err := s.Get(ctx, r.ID)
	if err != nil || string(got.Data) != `{"new":true}` || got.Version != 1 || got.Principal != "" {
		t.Fatalf("Get = %+v, %v", got, err)
	}
}

// TestMalformedItems checks that items the Store did not write give errors,
// not panics or wrong answers.
func TestMalformedItems(t *testing.T) {
	ctx, client, table := tableTest(t)
	var logs mcptest.LogBuffer
	s := newStore(t, client, table, &dynamo.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	S, N := attrS, attrN
	future := N(strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10))
	cases := map[string]map[string]types.AttributeValue{
		"version is a string": {dynamo.VersionAttribute: S("one"), dynamo.LastUsedAttribute: N("1"), dynamo.ExpiresAttribute: future},
		"no version":          {dynamo.LastUsedAttribute: N("1"), dynamo.ExpiresAttribute: future},
		"no expiry":           {dynamo.VersionAttribute: N("1"), dynamo.LastUsedAttribute: N("1")},
		"data is a string":    {dynamo.VersionAttribute: N("1"), dynamo.LastUsedAttribute: N("1"), dynamo.ExpiresAttribute: future, dynamo.DataAttribute: S("{}")},
		"version too large":   {dynamo.VersionAttribute: N("1e30"), dynamo.LastUsedAttribute: N("1"), dynamo.ExpiresAttribute: future},
		"principal is a map":  {dynamo.VersionAttribute: N("1"), dynamo.LastUsedAttribute: N("1"), dynamo.ExpiresAttribute: future, dynamo.PrincipalAttribute: &types.AttributeValueMemberM{}},
	}
	for name, it := range cases {
		id := storetest.NewID()
		it[dynamo.PartitionKey] = S(dynamo.KeyPrefix + id)
		if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: it}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, err := s.Get(ctx, id)
		if err == nil || errors.Is(err, core.ErrSessionNotFound) || !strings.HasPrefix(err.Error(), "dynamo: get session: malformed item") {
			t.Errorf("%s: Get = %v, want a malformed-item error", name, err)
		}
		rec := &core.SessionRecord{ID: id, Version: 1, Data: []byte(`{}`), LastUsed: time.Now(), Expires: time.Now().Add(time.Hour)}
		if err := s.Update(ctx, rec); err == nil && name != "data is a string" && name != "principal is a map" {
			t.Errorf("%s: Update succeeded", name)
		}
		s.Delete(ctx, id) // must not panic; either answer is fine
	}

	// A malformed entry in a pool is skipped by eviction, with a warning.
	if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: map[string]types.AttributeValue{
		dynamo.PartitionKey: S("not-a-session"), dynamo.PoolAttribute: S("p#judy"),
		dynamo.LastUsedAttribute: N("1"), dynamo.ExpiresAttribute: future}}); err != nil {
		t.Fatal(err)
	}
	lim := core.SessionLimits{PerPrincipal: 1}
	first := session("judy", time.Now())
	if ev, err := s.Create(ctx, first, lim); err != nil || len(ev) != 0 {
		t.Fatalf("Create = %v, %v", ev, err)
	}
	second := session("judy", time.Now())
	if ev, err := s.Create(ctx, second, lim); err != nil || len(ev) != 1 || ev[0] != first.ID {
		t.Fatalf("Create = %v, %v, want [%s] evicted", ev, err, first.ID)
	}
	if !strings.Contains(logs.String(), "malformed item") {
		t.Errorf("no warning about the malformed pool entry; logs:\n%s", logs.String())
	}
}

// TestTableMissing checks that a missing table gives wrapped errors.
func TestTableMissing(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	s := newStore(t, client, "mcpfn-no-such-table-"+storetest.NewID()[:8], nil)
	ctx := context.Background()
	r := session("kim", time.Now())
	check := func(op string, err error) {
		t.Helper()
		var nf *types.ResourceNotFoundException
		if !errors.As(err, &nf) || errors.Is(err, core.ErrSessionNotFound) || !strings.HasPrefix(err.Error(), "dynamo: "+op+" session: ") {
			t.Errorf("%s: %v, want a wrapped ResourceNotFoundException", op, err)
		}
	}
	_, err := s.Create(ctx, r, core.SessionLimits{PerPrincipal: 3})
	check("create", err)
	_, err = s.Get(ctx, r.ID)
	check("get", err)
	r.Version = 1
	check("update", s.Update(ctx, r))
	check("delete", s.Delete(ctx, r.ID))
}

// TestAnonymousShards checks the sharded anonymous pool: no shard exceeds
// its share and the total stays within the limit.
func TestAnonymousShards(t *testing.T) {
	ctx, client, table := tableTest(t)
	s := newStore(t, client, table, &dynamo.Options{AnonymousShardSize: 2})
	lim := core.SessionLimits{Anonymous: 6} // 3 shards of 2
	base := time.Now().Add(-time.Hour)
	var ids []string
	evicted := map[string]bool{}
	for i := 0; i < 30; i++ {
		r := session("", base.Add(time.Duration(i)*time.Second))
		ev, err := s.Create(ctx, r, lim)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ev {
			evicted[id] = true
		}
		ids = append(ids, r.ID)
	}
	live := 0
	for _, id := range ids {
		_, err := s.Get(ctx, id)
		switch {
		case err == nil:
			live++
			if evicted[id] {
				t.Errorf("%s was reported evicted but lives", id)
			}
		case errors.Is(err, core.ErrSessionNotFound):
			if !evicted[id] {
				t.Errorf("%s vanished without being reported evicted", id)
			}
		default:
			t.Fatal(err)
		}
	}
	if live > lim.Anonymous || live < 4 {
		t.Fatalf("%d live anonymous sessions, want at most %d (and at least 4 of 30)", live, lim.Anonymous)
	}
	if _, err := s.Get(ctx, ids[len(ids)-1]); err != nil {
		t.Fatal("the newest session was evicted")
	}
}

// landedButFailed makes the first UpdateItem or PutItem land and then
// answer with a throttling error, like a response lost after the write.
type landedButFailed struct {
	dynamo.Client
	mu   sync.Mutex
	done map[string]bool
}

func (l *landedButFailed) first(op string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done[op] {
		return false
	}
	if l.done == nil {
		l.done = map[string]bool{}
	}
	l.done[op] = true
	return true
}

var throttled = &smithy.GenericAPIError{Code: "ThrottlingException", Message: "injected after the write landed"}

func (l *landedButFailed) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	out, err := l.Client.PutItem(ctx, in, o...)
	if err == nil && l.first("put") {
		return nil, throttled
	}
	return out, err
}

func (l *landedButFailed) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	out, err := l.Client.UpdateItem(ctx, in, o...)
	if err == nil && l.first("update") {
		return nil, throttled
	}
	return out, err
}

// TestRetriedWriteThatLanded checks that a write retried after its first
// attempt landed is recognised as done: no false conflict, no lost or
// doubled version.
func TestRetriedWriteThatLanded(t *testing.T) {
	ctx, client, table := tableTest(t)
	s := newStore(t, &landedButFailed{Client: client}, table, &dynamo.Options{MaxAttempts: 3, MaxBackoff: 5 * time.Millisecond})
	r := session("leo", time.Now())
	if _, err := s.Create(ctx, r, core.SessionLimits{}); err != nil {
		t.Fatalf("Create retried after landing: %v", err)
	}
	r.Data = []byte(`{"n":2}`)
	if err := s.Update(ctx, r); err != nil {
		t.Fatalf("Update retried after landing: %v", err)
	}
	got, err := s.Get(ctx, r.ID)
	if err != nil || got.Version != 2 || r.Version != 2 || string(got.Data) != `{"n":2}` {
		t.Fatalf("Get = %+v, %v; caller's Version %d; want version 2", got, err, r.Version)
	}

	// Without retries the error is returned, wrapped.
	s1 := newStore(t, &landedButFailed{Client: client}, table, nil)
	if _, err := s1.Create(ctx, session("leo", time.Now()), core.SessionLimits{}); err == nil || !errors.Is(err, throttled) {
		t.Fatalf("Create = %v, want the throttling error", err)
	}
}

// TestCreateTable checks that CreateTable is idempotent and creates the
// schema of TableInput.
func TestCreateTable(t *testing.T) {
	ctx, client, table := tableTest(t)
	if err := dynamo.CreateTable(ctx, client, table); err != nil {
		t.Fatalf("second CreateTable: %v", err)
	}
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
	if err != nil {
		t.Fatal(err)
	}
	want := dynamo.TableInput(table)
	tb := out.Table
	if len(tb.KeySchema) != 1 || *tb.KeySchema[0].AttributeName != dynamo.PartitionKey || tb.KeySchema[0].KeyType != types.KeyTypeHash {
		t.Errorf("key schema %+v", tb.KeySchema)
	}
	if len(tb.GlobalSecondaryIndexes) != 1 {
		t.Fatalf("indexes %+v", tb.GlobalSecondaryIndexes)
	}
	ix, wix := tb.GlobalSecondaryIndexes[0], want.GlobalSecondaryIndexes[0]
	if *ix.IndexName != dynamo.PoolIndex || len(ix.KeySchema) != 2 ||
		*ix.KeySchema[0].AttributeName != dynamo.PoolAttribute || *ix.KeySchema[1].AttributeName != dynamo.LastUsedAttribute ||
		ix.Projection.ProjectionType != wix.Projection.ProjectionType ||
		strings.Join(ix.Projection.NonKeyAttributes, ",") != dynamo.ExpiresAttribute {
		t.Errorf("index %+v", ix)
	}
	if tb.BillingModeSummary != nil && tb.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
		t.Errorf("billing mode %v", tb.BillingModeSummary.BillingMode)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	client := dynamodb.New(dynamodb.Options{Region: "us-east-1"})
	for name, o := range map[string]*dynamo.Options{
		"short table name":    {TableName: "ab"},
		"bad table name":      {TableName: "sessions/prod"},
		"negative shard size": {AnonymousShardSize: -1},
		"negative attempts":   {MaxAttempts: -1},
		"negative backoff":    {MaxBackoff: -time.Second},
	} {
		if _, err := dynamo.New(client, o); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
	s, err := dynamo.New(client, nil)
	if err != nil || s.TableName() != dynamo.DefaultTableName {
		t.Fatalf("New(nil) = %v, %v", s, err)
	}
}

// touchAfterQuery runs touch once right after the first Query, as if
// another instance used a session between a Create's Query and its
// DeleteItem.
type touchAfterQuery struct {
	dynamo.Client
	touch func()
	once  sync.Once
}

func (c *touchAfterQuery) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := c.Client.Query(ctx, in, o...)
	c.once.Do(c.touch)
	return out, err
}

// TestEvictionSparesSessionUsedMeanwhile checks that eviction does not
// delete a session that was used after the pool was read.
func TestEvictionSparesSessionUsedMeanwhile(t *testing.T) {
	ctx, client, table := tableTest(t)
	s := newStore(t, client, table, nil)
	lim := core.SessionLimits{PerPrincipal: 2}
	base := time.Now().Add(-time.Minute)
	a, b := session("mia", base), session("mia", base.Add(time.Second))
	for _, r := range []*core.SessionRecord{a, b} {
		if _, err := s.Create(ctx, r, lim); err != nil {
			t.Fatal(err)
		}
	}
	racing := newStore(t, &touchAfterQuery{Client: client, touch: func() {
		a.LastUsed = base.Add(10 * time.Second)
		if err := s.Update(ctx, a); err != nil {
			t.Error(err)
		}
	}}, table, nil)
	c := session("mia", base.Add(2*time.Second))
	ev, err := racing.Create(ctx, c, lim)
	if err != nil || len(ev) != 0 {
		t.Fatalf("Create = %v, %v; want nothing evicted (the LRU session was used meanwhile)", ev, err)
	}
	for _, r := range []*core.SessionRecord{a, b, c} {
		if _, err := s.Get(ctx, r.ID); err != nil {
			t.Fatalf("Get(%s): %v", r.ID, err)
		}
	}
	// The next Create settles the pool: b and c are now the least recently used.
	ev, err = s.Create(ctx, session("mia", base.Add(20*time.Second)), lim)
	if err != nil || len(ev) != 2 || ev[0] != b.ID || ev[1] != c.ID {
		t.Fatalf("Create = %v, %v; want [%s %s] evicted", ev, err, b.ID, c.ID)
	}
}

// TestNilLoggerIsDefault checks that a Store built without a Logger warns
// through slog.Default() rather than nowhere: a malformed entry in a pool
// is skipped by eviction with a warning. It replaces the default logger,
// so it is not parallel.
func TestNilLoggerIsDefault(t *testing.T) {
	client := newClient(t)
	table := newTable(t, client)
	logs := mcptest.DefaultLogs(t)
	s := newStore(t, client, table, nil)
	ctx := context.Background()

	if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: map[string]types.AttributeValue{
		dynamo.PartitionKey:      &types.AttributeValueMemberS{Value: "not-a-session"},
		dynamo.PoolAttribute:     &types.AttributeValueMemberS{Value: "p#nina"},
		dynamo.LastUsedAttribute: &types.AttributeValueMemberN{Value: "1"},
		dynamo.ExpiresAttribute:  &types.AttributeValueMemberN{Value: strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)},
	}}); err != nil {
		t.Fatal(err)
	}
	lim := core.SessionLimits{PerPrincipal: 1}
	for range 2 {
		if _, err := s.Create(ctx, session("nina", time.Now()), lim); err != nil {
			t.Fatal(err)
		}
	}
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "malformed item") {
		t.Errorf("a Store without a Logger did not warn through slog.Default():\n%q", l)
	}
}
