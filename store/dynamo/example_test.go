package dynamo_test

import (
	"context"
	"log"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/store/dynamo"
)

// A Lambda function's main builds the store once, from the function's role
// and region, and hands it to the server.
func ExampleNew() {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		log.Fatal(err)
	}
	sessions, err := dynamo.New(dynamodb.NewFromConfig(cfg), &dynamo.Options{TableName: "mcpfn-sessions"})
	if err != nil {
		log.Fatal(err)
	}
	srv := core.NewServer(core.Implementation{Name: "example", Version: "1.0.0"},
		&core.ServerOptions{SessionStore: sessions})
	_ = srv // lambda.Start(srv), from adapters/lambda
}

// CreateTable provisions the table where no Terraform does, e.g. in tests.
func ExampleCreateTable() {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if err := dynamo.CreateTable(ctx, dynamodb.NewFromConfig(cfg), dynamo.DefaultTableName); err != nil {
		log.Fatal(err)
	}
}
