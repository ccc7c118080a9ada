package dynamo

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/mcpfn/mcpfn/core"
)

type attrs = map[string]types.AttributeValue

func attrS(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func attrN(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

func key(id string) attrs { return attrs{PartitionKey: attrS(KeyPrefix + id)} }

// ttlSeconds is the time-to-live value of an expiry: Unix seconds rounded up,
// so that DynamoDB never deletes an item before it expires.
func ttlSeconds(expires time.Time) int64 {
	ms := expires.UnixMilli()
	s := ms / 1000
	if ms%1000 > 0 {
		s++
	}
	return s
}

// encode returns the item that stores rec in pool.
func encode(rec *core.SessionRecord, pool string, version int64, wid string) attrs {
	it := attrs{
		PartitionKey:      attrS(KeyPrefix + rec.ID),
		PoolAttribute:     attrS(pool),
		LastUsedAttribute: attrN(rec.LastUsed.UnixMilli()),
		ExpiresAttribute:  attrN(rec.Expires.UnixMilli()),
		TTLAttribute:      attrN(ttlSeconds(rec.Expires)),
		VersionAttribute:  attrN(version),
		WriteAttribute:    attrS(wid),
	}
	if rec.Principal != "" {
		it[PrincipalAttribute] = attrS(rec.Principal)
	}
	if len(rec.Data) > 0 {
		it[DataAttribute] = &types.AttributeValueMemberB{Value: append([]byte(nil), rec.Data...)}
	}
	return it
}

// stored is a decoded item: the record and the bookkeeping beside it.
type stored struct {
	rec     *core.SessionRecord
	expires int64 // Unix milliseconds
	wid     string
}

func (s *stored) live(now time.Time) bool { return now.UnixMilli() < s.expires }

// decode reads a session item. It returns an error naming the attribute
// for an item this package did not write.
func decode(it attrs) (*stored, error) {
	pk, err := getS(it, PartitionKey, true)
	if err != nil {
		return nil, err
	}
	id, ok := strings.CutPrefix(pk, KeyPrefix)
	if !ok || id == "" {
		return nil, fmt.Errorf("malformed item: %s %q lacks the prefix %q", PartitionKey, pk, KeyPrefix)
	}
	ver, err := getN(it, VersionAttribute)
	if err != nil {
		return nil, err
	}
	lu, err := getN(it, LastUsedAttribute)
	if err != nil {
		return nil, err
	}
	exp, err := getN(it, ExpiresAttribute)
	if err != nil {
		return nil, err
	}
	prn, err := getS(it, PrincipalAttribute, false)
	if err != nil {
		return nil, err
	}
	wid, err := getS(it, WriteAttribute, false)
	if err != nil {
		return nil, err
	}
	var data []byte
	if v, ok := it[DataAttribute]; ok {
		b, ok := v.(*types.AttributeValueMemberB)
		if !ok {
			return nil, fmt.Errorf("malformed item: %s is %s, want B", DataAttribute, typeName(v))
		}
		data = append([]byte(nil), b.Value...)
	}
	rec := &core.SessionRecord{ID: id, Principal: prn, Data: data, Version: ver,
		LastUsed: time.UnixMilli(lu), Expires: time.UnixMilli(exp)}
	return &stored{rec: rec, expires: exp, wid: wid}, nil
}

func getS(it attrs, name string, required bool) (string, error) {
	v, ok := it[name]
	if !ok {
		if required {
			return "", fmt.Errorf("malformed item: no %s", name)
		}
		return "", nil
	}
	s, ok := v.(*types.AttributeValueMemberS)
	if !ok {
		return "", fmt.Errorf("malformed item: %s is %s, want S", name, typeName(v))
	}
	return s.Value, nil
}

func getN(it attrs, name string) (int64, error) {
	v, ok := it[name]
	if !ok {
		return 0, fmt.Errorf("malformed item: no %s", name)
	}
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		return 0, fmt.Errorf("malformed item: %s is %s, want N", name, typeName(v))
	}
	i, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("malformed item: %s %q is not an integer", name, n.Value)
	}
	return i, nil
}

func typeName(v types.AttributeValue) string {
	switch v.(type) {
	case *types.AttributeValueMemberS:
		return "S"
	case *types.AttributeValueMemberN:
		return "N"
	case *types.AttributeValueMemberB:
		return "B"
	case *types.AttributeValueMemberBOOL:
		return "BOOL"
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case *types.AttributeValueMemberM:
		return "M"
	case *types.AttributeValueMemberL:
		return "L"
	case *types.AttributeValueMemberSS:
		return "SS"
	case *types.AttributeValueMemberNS:
		return "NS"
	case *types.AttributeValueMemberBS:
		return "BS"
	}
	return fmt.Sprintf("%T", v)
}
