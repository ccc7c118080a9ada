package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// The table's schema. Infrastructure code (Terraform, CloudFormation) that
// provisions the table must use exactly these names; [TableInput] is the
// reference.
const (
	// DefaultTableName is the table used when Options.TableName is empty.
	DefaultTableName = "mcpfn-sessions"

	// PartitionKey is the table's only key attribute (S): [KeyPrefix]
	// followed by the session id. The table has no sort key.
	PartitionKey = "pk"
	// KeyPrefix starts every PartitionKey value.
	KeyPrefix = "s#"

	// PoolIndex is the global secondary index that lists a pool's sessions
	// by last use: partition key [PoolAttribute], sort key
	// [LastUsedAttribute], projecting [ExpiresAttribute] besides the keys.
	PoolIndex = "pool-lru"
	// PoolAttribute (S) names the eviction pool of the session: "p#" and the
	// principal, or "a#" and a shard number for anonymous sessions.
	PoolAttribute = "pool"
	// LastUsedAttribute (N) is SessionRecord.LastUsed in Unix milliseconds.
	LastUsedAttribute = "lu"
	// ExpiresAttribute (N) is SessionRecord.Expires in Unix milliseconds.
	// Every operation compares it with the clock: an expired item is absent
	// whether or not DynamoDB has deleted it yet.
	ExpiresAttribute = "exp"
	// TTLAttribute (N) is SessionRecord.Expires in Unix seconds, rounded up:
	// the table's time-to-live attribute, with which DynamoDB deletes
	// expired items eventually (typically within days).
	TTLAttribute = "ttl"
	// VersionAttribute (N) is SessionRecord.Version.
	VersionAttribute = "ver"
	// DataAttribute (B) is SessionRecord.Data; absent when empty.
	DataAttribute = "data"
	// PrincipalAttribute (S) is SessionRecord.Principal; absent for an
	// anonymous session.
	PrincipalAttribute = "prn"
	// WriteAttribute (S) is a random token of the last write, with which a
	// retried write recognises that its earlier attempt landed.
	WriteAttribute = "wid"
)

// IAMActions returns, in a new slice, the DynamoDB actions a Store calls at
// run time: grant them on the table's ARN and on its indexes (ARN +
// "/index/*"). CreateTable needs dynamodb:CreateTable,
// dynamodb:DescribeTable and dynamodb:UpdateTimeToLive besides; a Store
// never calls them.
func IAMActions() []string {
	return []string{
		"dynamodb:DeleteItem",
		"dynamodb:GetItem",
		"dynamodb:PutItem",
		"dynamodb:Query",
		"dynamodb:UpdateItem",
	}
}

// TableInput returns the CreateTable request for a session table named
// name: on-demand billing (PAY_PER_REQUEST), key [PartitionKey] and the
// index [PoolIndex]. Time to live on [TTLAttribute] is enabled separately
// (UpdateTimeToLive); [CreateTable] does both. Each call returns a new value.
func TableInput(name string) *dynamodb.CreateTableInput {
	return &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(PartitionKey), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(PoolAttribute), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(LastUsedAttribute), AttributeType: types.ScalarAttributeTypeN},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(PartitionKey), KeyType: types.KeyTypeHash},
		},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName: aws.String(PoolIndex),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String(PoolAttribute), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String(LastUsedAttribute), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{
				ProjectionType:   types.ProjectionTypeInclude,
				NonKeyAttributes: []string{ExpiresAttribute},
			},
		}},
	}
}

// TableClient is the part of *dynamodb.Client that CreateTable uses.
type TableClient interface {
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
}

var _ TableClient = (*dynamodb.Client)(nil)

// CreateTable creates the session table described by [TableInput], waits
// until it and its index are ACTIVE, and enables time to live on
// [TTLAttribute]. A table of that name that already exists is waited for
// and kept as it is. Endpoints without time to live (dynalite answers
// UnknownOperationException) are tolerated: the Store never relies on it.
// ctx bounds the wait. It is meant for tests and for deployments without
// infrastructure code; production tables are better provisioned by
// Terraform with the same schema.
func CreateTable(ctx context.Context, client TableClient, name string) error {
	if _, err := client.CreateTable(ctx, TableInput(name)); err != nil {
		var inUse *types.ResourceInUseException
		if !errors.As(err, &inUse) {
			return fmt.Errorf("dynamo: create table %s: %w", name, err)
		}
	}
	if err := waitActive(ctx, client, name); err != nil {
		return err
	}
	_, err := client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(TTLAttribute),
			Enabled:       aws.Bool(true),
		},
	})
	if err != nil {
		var ae smithy.APIError
		switch {
		case errors.As(err, &ae) && ae.ErrorCode() == "UnknownOperationException":
			// dynalite: no time to live; expired items stay, and are absent.
		case errors.As(err, &ae) && ae.ErrorCode() == "ValidationException" &&
			strings.Contains(ae.ErrorMessage(), "already enabled"):
		default:
			return fmt.Errorf("dynamo: enable time to live on %s: %w", name, err)
		}
	}
	return nil
}

// waitActive polls DescribeTable until the table and all its global
// secondary indexes are ACTIVE.
func waitActive(ctx context.Context, client TableClient, name string) error {
	delay := 20 * time.Millisecond
	for {
		out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			var nf *types.ResourceNotFoundException
			if !errors.As(err, &nf) { // just created: may not be visible yet
				return fmt.Errorf("dynamo: describe table %s: %w", name, err)
			}
		} else if t := out.Table; t != nil && t.TableStatus == types.TableStatusActive {
			active := true
			for _, ix := range t.GlobalSecondaryIndexes {
				active = active && ix.IndexStatus == types.IndexStatusActive
			}
			if active {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("dynamo: waiting for table %s to become active: %w", name, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(2*delay, 2*time.Second)
	}
}
