// Command mktable creates a session table of store/dynamo (dynamo.CreateTable)
// and waits until it is active: the conformance adapters that run the
// fixture as several Lambda processes create a fresh table each with it.
//
//	go run ./test/dynalite/mktable -endpoint http://127.0.0.1:PORT NAME
//
// Without -endpoint, the AWS SDK's default configuration decides
// (AWS_ENDPOINT_URL_DYNAMODB, AWS_REGION, credentials); -endpoint also
// supplies a region and dummy credentials when none are configured, as
// dynalite and DynamoDB Local accept any.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mcpfn/mcpfn/store/dynamo"
)

func main() {
	endpoint := flag.String("endpoint", "", "DynamoDB endpoint URL (default: the AWS configuration's)")
	timeout := flag.Duration("timeout", 30*time.Second, "give up after this long")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: mktable [-endpoint URL] TABLE")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, *endpoint, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "mktable:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, endpoint, table string) error {
	var opts []func(*config.LoadOptions) error
	if endpoint != "" {
		opts = append(opts, config.WithBaseEndpoint(endpoint))
		if os.Getenv("AWS_REGION") == "" && os.Getenv("AWS_DEFAULT_REGION") == "" {
			opts = append(opts, config.WithRegion("us-east-1"))
		}
		if os.Getenv("AWS_ACCESS_KEY_ID") == "" {
			opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
		}
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return err
	}
	client := dynamodb.NewFromConfig(cfg)
	if err := dynamo.CreateTable(ctx, client, table); err != nil {
		return err
	}
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		return err
	}
	fmt.Println(aws.ToString(out.Table.TableArn))
	return nil
}
