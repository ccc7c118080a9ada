//go:build js && wasm

package workers

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"github.com/mcpfn/mcpfn/adapters/workers/durable"
	"github.com/mcpfn/mcpfn/core"
)

// StateKeyVar names the secret holding the keys that seal request state:
// comma-separated standard base64 keys of at least core.MinKeyBytes bytes
// each (openssl rand -base64 32); the first seals, all open, which is how a
// key rotates. Every instance of the Worker must share them.
const StateKeyVar = "MCPFN_STATE_KEY"

// ServerOptions returns a copy of opts (nil means the zero value) set up
// for many instances sharing state: legacy sessions and tasks in Durable
// Objects of the namespace bound as MCPFN_STATE (package durable), tasks
// run by that namespace's alarms through the McpfnTasks entry point bound
// as MCPFN_TASKS, and the keys that seal request state from the secret
// MCPFN_STATE_KEY. Fields opts already sets are kept. It panics when the
// secret is missing or malformed: each instance would otherwise seal with
// a key of its own, and a client's next round could reach another.
func ServerOptions(opts *core.ServerOptions) *core.ServerOptions {
	var o core.ServerOptions
	if opts != nil {
		o = *opts
	}
	if o.SessionStore == nil {
		o.SessionStore = &durable.Sessions{Call: Call}
	}
	if o.TaskStore == nil {
		o.TaskStore = &durable.Tasks{Call: Call}
	}
	if o.TaskRunner == nil {
		o.TaskRunner = &durable.Runner{Call: Call}
	}
	if o.Keys == nil {
		keys, err := stateKeys(os.Getenv(StateKeyVar))
		if err != nil {
			panic("workers: " + err.Error())
		}
		o.Keys = keys
	}
	return &o
}

// stateKeys parses the MCPFN_STATE_KEY secret; a key's id is derived from
// it (a truncated SHA-256), as package deploy/lambdaenv derives it.
func stateKeys(v string) (core.StaticKeys, error) {
	if strings.TrimSpace(v) == "" {
		return nil, fmt.Errorf("the secret %s is not set: `openssl rand -base64 32 | wrangler secret put %s`", StateKeyVar, StateKeyVar)
	}
	var keys core.StaticKeys
	for i, k := range strings.Split(v, ",") {
		secret, err := base64.StdEncoding.DecodeString(strings.TrimSpace(k))
		if err != nil {
			return nil, fmt.Errorf("%s: key %d is not standard base64: %v", StateKeyVar, i+1, err)
		}
		if len(secret) < core.MinKeyBytes {
			return nil, fmt.Errorf("%s: key %d has %d bytes, at least %d required", StateKeyVar, i+1, len(secret), core.MinKeyBytes)
		}
		sum := sha256.Sum256(secret)
		id := "env-" + hex.EncodeToString(sum[:4])
		for _, prev := range keys {
			if prev.ID == id {
				return nil, fmt.Errorf("%s: key %d is listed twice", StateKeyVar, i+1)
			}
		}
		keys = append(keys, core.Key{ID: id, Secret: secret})
	}
	return keys, nil
}
