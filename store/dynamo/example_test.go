package dynamo_test

import (
	"context"
	"log"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/store/dynamo"
)

// cfg is the function's AWS configuration, which a program loads with
// config.LoadDefaultConfig(ctx) of github.com/aws/aws-sdk-go-v2/config. This
// module does not require that package, so that its users inherit the
// DynamoDB client and nothing else (docs/design.md, "Module layout").
var cfg aws.Config

// A Lambda function's main builds the store once, from the function's role
// and region, and hands it to the server.
func ExampleNew() {
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
	if err := dynamo.CreateTable(ctx, dynamodb.NewFromConfig(cfg), dynamo.DefaultTableName); err != nil {
		log.Fatal(err)
	}
}

// Change notifications cross the function's instances through the session
// table: a tool removed, or a resource updated, on one instance reaches the
// listen streams (and legacy GET streams) held by every other.
func ExampleNewChangeBus() {
	client := dynamodb.NewFromConfig(cfg)
	opts := &dynamo.Options{TableName: "mcpfn-sessions"}
	sessions, err := dynamo.New(client, opts)
	if err != nil {
		log.Fatal(err)
	}
	changes, err := dynamo.NewChangeBus(client, opts)
	if err != nil {
		log.Fatal(err)
	}
	srv := core.NewServer(core.Implementation{Name: "example", Version: "1.0.0"},
		&core.ServerOptions{SessionStore: sessions, ChangeBus: changes})
	_ = srv
}
