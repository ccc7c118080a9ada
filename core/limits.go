package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Limits on the client-supplied objects that the server canonicalizes,
// validates and binds (tool and prompt arguments, inputResponses). A request
// over a limit is answered -32602 before any handler runs. See
// docs/design.md, "Hardening: request bodies and arguments".
const (
	// MaxArgumentDepth is how deeply objects and arrays may nest inside
	// arguments (the arguments object itself is depth 1).
	MaxArgumentDepth = 32
	// MaxArgumentMembers is how many members one object inside arguments
	// may have.
	MaxArgumentMembers = 10000
)

var (
	errTooDeep        = fmt.Errorf("nested deeper than %d levels", MaxArgumentDepth)
	errTooManyMembers = fmt.Errorf("an object has more than %d members", MaxArgumentMembers)
)

// dupKeyError names a key that occurs twice in one object.
type dupKeyError struct{ key string }

func (e *dupKeyError) Error() string {
	k := e.key
	if len(k) > 64 {
		k = k[:64] + "..."
	}
	return fmt.Sprintf("duplicate key %q", k)
}

// checkArguments enforces MaxArgumentDepth and MaxArgumentMembers on the
// valid JSON value v and rejects an object, at any depth, that names a key
// twice: schema validation sees one of the two values, and a decoder may
// bind the other. what names the value in the -32602 message.
func checkArguments(what string, v []byte) error {
	if err := checkValue(v, 0); err != nil {
		return InvalidParamsError("Invalid params: %s: %v", what, err)
	}
	return nil
}

// checkValue checks v, found at the given depth. Each object's keys are
// compared pairwise while there are few (no allocation), then sorted: the
// cost is O(n log n) in the members of an object, and the recursion is
// bounded by MaxArgumentDepth.
func checkValue(v []byte, depth int) error {
	if len(v) == 0 || (v[0] != '{' && v[0] != '[') {
		return nil
	}
	if depth >= MaxArgumentDepth {
		return errTooDeep
	}
	if v[0] == '[' {
		for i := skipSpace(v, 1); i < len(v) && v[i] != ']'; {
			end := skipValue(v, i)
			if err := checkValue(v[i:end], depth+1); err != nil {
				return err
			}
			i = skipSpace(v, end)
			if i < len(v) && v[i] == ',' {
				i = skipSpace(v, i+1)
			}
		}
		return nil
	}
	const few = 16
	var small [few][]byte
	keys := small[:0]
	var err error
	perr := eachMember(v, func(k, val []byte) bool {
		if len(keys) >= MaxArgumentMembers {
			err = errTooManyMembers
			return false
		}
		k = decodedKey(k)
		if len(keys) < few {
			for _, e := range keys {
				if bytes.Equal(e, k) {
					err = &dupKeyError{string(k)}
					return false
				}
			}
		}
		keys = append(keys, k)
		err = checkValue(val, depth+1)
		return err == nil
	})
	if err != nil {
		return err
	}
	if perr != nil {
		return errors.New("not a JSON object")
	}
	if len(keys) > few {
		slices.SortFunc(keys, bytes.Compare)
		for i := 1; i < len(keys); i++ {
			if bytes.Equal(keys[i], keys[i-1]) {
				return &dupKeyError{string(keys[i])}
			}
		}
	}
	return nil
}

// bindOptions decode handler input (tool arguments, accepted form content)
// with encoding/json's semantics in all but two points: member names match
// struct fields case-sensitively, as the JSON Schema that validated them
// does, and a duplicate name is an error. encoding/json would bind "REGION"
// to the field named "region", a value the schema never saw.
var bindOptions = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(),
	jsonv2.MatchCaseInsensitiveNames(false), jsontext.AllowDuplicateNames(false))

// bindJSON decodes handler input into v with bindOptions.
func bindJSON(data []byte, v any) error { return jsonv2.Unmarshal(data, v, bindOptions) }

// decodedKey returns the raw member key k (as eachMember passes it) as a
// decoder sees it: escapes decoded and invalid UTF-8 replaced by U+FFFD, as
// encoding/json does. Plain keys, the usual case, are returned as they are.
func decodedKey(k []byte) []byte {
	if bytes.IndexByte(k, '\\') < 0 && !hasControl(k) && utf8.Valid(k) {
		return k
	}
	q := make([]byte, 0, len(k)+2)
	q = append(append(append(q, '"'), k...), '"')
	var s string
	json.Unmarshal(q, &s)
	return []byte(s)
}
