package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpfn/mcpfn/internal/testenv"
	"github.com/mcpfn/mcpfn/store/dynamo"
	"github.com/mcpfn/mcpfn/test/internal/dynalite"
)

// TestRun creates a table twice (the second run keeps it) and checks that it
// is active with the session index. It needs dynalite
// (test/dynalite/with.sh).
func TestRun(t *testing.T) {
	endpoint := testenv.DynamoEndpoint(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	name := fmt.Sprintf("mktable-%d", time.Now().UnixNano())
	for range 2 {
		if err := run(ctx, endpoint, name); err != nil {
			t.Fatal(err)
		}
	}
	client := dynalite.Client(endpoint)
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	if out.Table.TableStatus != types.TableStatusActive || len(out.Table.GlobalSecondaryIndexes) != 1 ||
		aws.ToString(out.Table.GlobalSecondaryIndexes[0].IndexName) != dynamo.PoolIndex {
		t.Errorf("table %s: status %s, indexes %+v", name, out.Table.TableStatus, out.Table.GlobalSecondaryIndexes)
	}
}
