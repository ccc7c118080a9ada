package jsonwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"
)

// Limits on client-supplied objects (tool and prompt arguments,
// inputResponses); core exports them as MaxArgumentDepth and
// MaxArgumentMembers. See docs/design.md, "Tools, arguments and
// results".
const (
	// MaxDepth is how deeply objects and arrays may nest (the outermost
	// value is depth 1).
	MaxDepth = 32
	// MaxMembers is how many members one object may have.
	MaxMembers = 10000
)

// Check enforces MaxDepth and MaxMembers on the valid JSON value v and
// rejects an object, at any depth, that names a key twice: schema
// validation sees one of the two values, and a decoder may bind the other.
func Check(v []byte) error { return checkValue(v, 0) }

// Errors of Check past the limits.
var (
	ErrTooDeep        = fmt.Errorf("nested deeper than %d levels", MaxDepth)
	ErrTooManyMembers = fmt.Errorf("an object has more than %d members", MaxMembers)
)

// DupKeyError names a key that occurs twice in one object.
type DupKeyError struct{ key string }

// Error names the key, cut to 64 bytes.
func (e *DupKeyError) Error() string {
	k := e.key
	if len(k) > 64 {
		k = k[:64] + "..."
	}
	return fmt.Sprintf("duplicate key %q", k)
}

// checkValue checks v, found at the given depth. Each object's keys are
// compared pairwise while there are few (no allocation), then sorted: the
// cost is O(n log n) in the members of an object, and the recursion is
// bounded by MaxDepth.
func checkValue(v []byte, depth int) error {
	if len(v) == 0 || (v[0] != '{' && v[0] != '[') {
		return nil
	}
	if depth >= MaxDepth {
		return ErrTooDeep
	}
	if v[0] == '[' {
		for i := SkipSpace(v, 1); i < len(v) && v[i] != ']'; {
			end := SkipValue(v, i)
			if err := checkValue(v[i:end], depth+1); err != nil {
				return err
			}
			i = SkipSpace(v, end)
			if i < len(v) && v[i] == ',' {
				i = SkipSpace(v, i+1)
			}
		}
		return nil
	}
	const few = 16
	var small [few][]byte
	keys := small[:0]
	var err error
	perr := EachMember(v, func(k, val []byte) bool {
		if len(keys) >= MaxMembers {
			err = ErrTooManyMembers
			return false
		}
		k = DecodedKey(k)
		if len(keys) < few {
			for _, e := range keys {
				if bytes.Equal(e, k) {
					err = &DupKeyError{string(k)}
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
				return &DupKeyError{string(keys[i])}
			}
		}
	}
	return nil
}

// DecodedKey returns the raw member key k (as EachMember passes it) as a
// decoder sees it: escapes decoded and invalid UTF-8 replaced by U+FFFD, as
// encoding/json does. Plain keys, the usual case, are returned as they are.
func DecodedKey(k []byte) []byte {
	if bytes.IndexByte(k, '\\') < 0 && !HasControl(k) && utf8.Valid(k) {
		return k
	}
	q := make([]byte, 0, len(k)+2)
	q = append(append(append(q, '"'), k...), '"')
	var s string
	json.Unmarshal(q, &s)
	return []byte(s)
}
