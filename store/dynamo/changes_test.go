package dynamo_test

import (
	"context"
	"testing"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/store/dynamo"
	"github.com/mcpfn/mcpfn/store/storetest"
)

// TestChangeBusSuite runs storetest.RunChangeBus, each case on a table of
// its own.
func TestChangeBusSuite(t *testing.T) {
	t.Parallel()
	storetest.RunChangeBus(t, func(t *testing.T) core.ChangeBus {
		client := newClient(t)
		b, err := dynamo.NewChangeBus(client, &dynamo.Options{TableName: newTable(t, client), ChangeLogSize: 30})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}, 30)
}

// Two logs in one table are apart; options out of range are refused.
func TestChangeBusLogs(t *testing.T) {
	ctx, client, table := tableTest(t)
	a, err := dynamo.NewChangeBus(client, &dynamo.Options{TableName: table, ChangeLog: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := dynamo.NewChangeBus(client, &dynamo.Options{TableName: table, ChangeLog: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Publish(ctx, core.Change{Kind: core.ChangeTools, Origin: "x"}); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Read(ctx, 0); err != nil || len(got.Changes) != 0 || got.Next != 0 {
		t.Fatalf("log b after a publish on log a: %+v, %v", got, err)
	}
	if got, err := a.Read(ctx, 0); err != nil || len(got.Changes) != 1 {
		t.Fatalf("log a: %+v, %v", got, err)
	}
	for _, size := range []int{-1, dynamo.MaxChangeLogSize + 1} {
		if _, err := dynamo.NewChangeBus(client, &dynamo.Options{TableName: table, ChangeLogSize: size}); err == nil {
			t.Errorf("ChangeLogSize %d accepted", size)
		}
	}
	long := make([]byte, core.MaxChangeURIBytes+1)
	for i := range long {
		long[i] = 'a'
	}
	if err := a.Publish(context.Background(), core.Change{Kind: core.ChangeResourceUpdated, URI: string(long)}); err == nil {
		t.Error("a URI over MaxChangeURIBytes was published")
	}
}
