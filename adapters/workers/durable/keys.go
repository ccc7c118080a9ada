package durable

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/mcpfn/mcpfn/core"
)

// ParseKeys parses the secret that holds the keys sealing request state
// (named name in errors, as MCPFN_STATE_KEY): comma-separated standard
// base64 keys of at least core.MinKeyBytes bytes each (openssl rand -base64
// 32). The first seals and all open, which is how a key rotates: add the
// new key first, and remove the old one once no state sealed with it can be
// in flight. A key's id is derived from it (a truncated SHA-256), as
// package deploy/lambdaenv derives it, so that every instance agrees.
func ParseKeys(name, secret string) (core.StaticKeys, error) {
	if strings.TrimSpace(secret) == "" {
		return nil, fmt.Errorf("the secret %s is not set: `openssl rand -base64 32 | wrangler secret put %s`", name, name)
	}
	var keys core.StaticKeys
	for i, k := range strings.Split(secret, ",") {
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(k))
		if err != nil {
			return nil, fmt.Errorf("%s: key %d is not standard base64: %v", name, i+1, err)
		}
		if len(b) < core.MinKeyBytes {
			return nil, fmt.Errorf("%s: key %d has %d bytes, at least %d required", name, i+1, len(b), core.MinKeyBytes)
		}
		sum := sha256.Sum256(b)
		id := "env-" + hex.EncodeToString(sum[:4])
		for _, prev := range keys {
			if prev.ID == id {
				return nil, fmt.Errorf("%s: key %d is listed twice", name, i+1)
			}
		}
		keys = append(keys, core.Key{ID: id, Secret: b})
	}
	return keys, nil
}
