// Package dynalite connects the test module's programs and tests to a
// dynalite (the local DynamoDB that test/dynalite/with.sh starts): a client
// with the static credentials it accepts, and fresh session tables.
package dynalite

import (
	"context"
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mcpfn/mcpfn/internal/testenv"
	"github.com/mcpfn/mcpfn/store/dynamo"
)

// Client returns a client of the dynalite at endpoint (a URL).
func Client(endpoint string) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
}

// NewTable creates a session table (store/dynamo's schema) on the dynalite
// at endpoint, named prefix and a random suffix, and returns a client of
// that dynalite and the table's name.
func NewTable(ctx context.Context, endpoint, prefix string) (*dynamodb.Client, string, error) {
	db := Client(endpoint)
	table := prefix + rand.Text()
	if err := dynamo.CreateTable(ctx, db, table); err != nil {
		return nil, "", fmt.Errorf("creating the session table %s: %w", table, err)
	}
	return db, table, nil
}

// Table is NewTable on the dynalite of the test suite
// (testenv.DynamoEndpoint); a failure ends the test.
func Table(tb testing.TB, prefix string) (*dynamodb.Client, string) {
	tb.Helper()
	db, table, err := NewTable(tb.Context(), testenv.DynamoEndpoint(tb), prefix)
	if err != nil {
		tb.Fatal(err)
	}
	return db, table
}
