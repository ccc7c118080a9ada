package dynamo

import (
	"context"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpfn/mcpfn/core"
)

// ChangeKeyPrefix starts the PartitionKey of a change log item: "c#" and
// the log's name (Options.ChangeLog, "default" when empty).
const ChangeKeyPrefix = "c#"

// The attributes of a change log item.
const (
	// ChangePosAttribute (N) is the position of the newest change, the
	// log's optimistic-concurrency counter.
	ChangePosAttribute = "cpos"
	// ChangesAttribute (L) holds the newest changes, oldest first, each a
	// map of "p" (N, position), "k" (S, core.ChangeKind), "u" (S, URI,
	// absent when empty) and "o" (S, origin).
	ChangesAttribute = "chg"
)

// DefaultChangeLogSize is the number of changes a ChangeBus keeps when
// Options.ChangeLogSize is zero. With URIs of at most
// core.MaxChangeURIBytes the item stays far under DynamoDB's 400 KB.
const DefaultChangeLogSize = 100

// MaxChangeLogSize bounds Options.ChangeLogSize.
const MaxChangeLogSize = 150

// changeAttempts bounds the conditional writes of one Publish that lose to
// concurrent publishers.
const changeAttempts = 8

// ChangeBus is a core.ChangeBus in the session table: one item holds the
// newest changes of the log and the position of the newest. Publish reads
// the item (one strongly consistent GetItem) and writes it back with the
// new change (one PutItem conditioned on the position it read; again,
// after a short jittered pause, while concurrent publishers win, at most 8
// times). Read is one strongly consistent GetItem, and core reads once per
// ServerOptions.ChangePollInterval per instance holding streams, however
// many streams it holds. The IAM actions are those of [IAMActions]. Build
// it with NewChangeBus.
type ChangeBus struct {
	s    *Store
	key  attrs
	size int
}

var _ core.ChangeBus = (*ChangeBus)(nil)

// NewChangeBus returns a ChangeBus on the table of opts (the session table)
// that uses client, typically a *dynamodb.Client. opts may be nil. It
// returns an error for invalid options; it does not call DynamoDB.
// NewChangeBus panics if client is nil.
func NewChangeBus(client Client, opts *Options) (*ChangeBus, error) {
	if client == nil {
		panic("dynamo: NewChangeBus: nil Client")
	}
	s, err := New(client, opts)
	if err != nil {
		return nil, err
	}
	name, size := "default", DefaultChangeLogSize
	if opts != nil {
		if opts.ChangeLog != "" {
			name = opts.ChangeLog
		}
		if opts.ChangeLogSize != 0 {
			size = opts.ChangeLogSize
		}
	}
	if size < 1 || size > MaxChangeLogSize {
		return nil, fmt.Errorf("dynamo: ChangeLogSize %d: must be 0 (the default) to %d, so that the log fits in an item", size, MaxChangeLogSize)
	}
	if len(name) > 256 {
		return nil, fmt.Errorf("dynamo: ChangeLog of %d bytes, at most 256", len(name))
	}
	return &ChangeBus{s: s, key: attrs{PartitionKey: attrS(ChangeKeyPrefix + name)}, size: size}, nil
}

// Publish implements core.ChangeBus.
func (b *ChangeBus) Publish(ctx context.Context, c core.Change) error {
	if len(c.URI) > core.MaxChangeURIBytes {
		return fmt.Errorf("dynamo: publish change: a URI of %d bytes, at most %d", len(c.URI), core.MaxChangeURIBytes)
	}
	pause := 5 * time.Millisecond
	for attempt := 1; ; attempt++ {
		pos, log, err := b.read(ctx)
		if err != nil {
			return fmt.Errorf("dynamo: publish change: %w", err)
		}
		c.Pos = pos + 1
		log = append(log, c)
		if len(log) > b.size {
			log = log[len(log)-b.size:]
		}
		item := attrs{PartitionKey: b.key[PartitionKey], ChangePosAttribute: attrN(c.Pos), ChangesAttribute: encodeChanges(log)}
		in := &dynamodb.PutItemInput{TableName: &b.s.table, Item: item}
		if pos == 0 {
			in.ConditionExpression = aws.String("attribute_not_exists(#pk)")
			in.ExpressionAttributeNames = map[string]string{"#pk": PartitionKey}
		} else {
			in.ConditionExpression = aws.String("#pos = :pos")
			in.ExpressionAttributeNames = map[string]string{"#pos": ChangePosAttribute}
			in.ExpressionAttributeValues = attrs{":pos": attrN(pos)}
		}
		_, err = withRetry(ctx, b.s, func(ctx context.Context) (*dynamodb.PutItemOutput, error) {
			return b.s.client.PutItem(ctx, in)
		})
		var cf *types.ConditionalCheckFailedException
		if !errors.As(err, &cf) {
			if err != nil {
				return fmt.Errorf("dynamo: publish change: %w", err)
			}
			return nil
		}
		if attempt >= changeAttempts {
			return fmt.Errorf("dynamo: publish change: lost to concurrent publishers %d times", attempt)
		}
		t := time.NewTimer(pause/2 + mathrand.N(pause))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("dynamo: publish change: %w", ctx.Err())
		case <-t.C:
		}
		pause *= 2
	}
}

// Read implements core.ChangeBus.
func (b *ChangeBus) Read(ctx context.Context, after int64) (*core.ChangeBatch, error) {
	pos, log, err := b.read(ctx)
	if err != nil {
		return nil, fmt.Errorf("dynamo: read changes: %w", err)
	}
	out := &core.ChangeBatch{Next: pos}
	switch {
	case after < 0:
		return out, nil
	case after > pos: // the log was deleted and begun again
		out.Missed = true
		return out, nil
	case after < pos && (len(log) == 0 || log[0].Pos > after+1):
		out.Missed = true
	}
	for _, c := range log {
		if c.Pos > after {
			out.Changes = append(out.Changes, c)
		}
	}
	return out, nil
}

// read returns the log's position and changes; 0 and none when there is
// no item yet.
func (b *ChangeBus) read(ctx context.Context) (int64, []core.Change, error) {
	it, err := b.s.getItem(ctx, b.key)
	if err != nil || it == nil {
		return 0, nil, err
	}
	pos, err := getN(it, ChangePosAttribute)
	if err != nil {
		return 0, nil, err
	}
	l, ok := it[ChangesAttribute].(*types.AttributeValueMemberL)
	if !ok {
		return 0, nil, fmt.Errorf("malformed change log: %s is %s", ChangesAttribute, typeName(it[ChangesAttribute]))
	}
	log := make([]core.Change, 0, len(l.Value))
	for _, v := range l.Value {
		m, ok := v.(*types.AttributeValueMemberM)
		if !ok {
			return 0, nil, errors.New("malformed change log: a change is not a map")
		}
		p, err := getN(m.Value, "p")
		if err != nil {
			return 0, nil, err
		}
		var c core.Change
		c.Pos = p
		var k string
		if k, err = getS(m.Value, "k", true); err != nil {
			return 0, nil, err
		}
		c.Kind = core.ChangeKind(k)
		if c.URI, err = getS(m.Value, "u", false); err != nil {
			return 0, nil, err
		}
		if c.Origin, err = getS(m.Value, "o", false); err != nil {
			return 0, nil, err
		}
		log = append(log, c)
	}
	return pos, log, nil
}

func encodeChanges(log []core.Change) types.AttributeValue {
	l := make([]types.AttributeValue, len(log))
	for i, c := range log {
		m := attrs{"p": attrN(c.Pos), "k": attrS(string(c.Kind))}
		if c.Origin != "" {
			m["o"] = attrS(c.Origin)
		}
		if c.URI != "" {
			m["u"] = attrS(c.URI)
		}
		l[i] = &types.AttributeValueMemberM{Value: m}
	}
	return &types.AttributeValueMemberL{Value: l}
}
