package durable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mcpfn/mcpfn/core"
)

// DefaultBinding is the name the McpfnState namespace is bound as.
const DefaultBinding = "MCPFN_STATE"

// MaxRecordBytes is the largest record an object keeps: a session's data
// or a task record's JSON. Past it, Create and Update fail with
// core.ErrTaskTooLarge (tasks) or an error (sessions).
const MaxRecordBytes = 1 << 20

// Caller calls the RPC method method of the Durable Object named object in
// the namespace bound as binding, with one string argument, and returns
// the string it returns. workers.Call is one.
type Caller func(ctx context.Context, binding, object, method, arg string) (string, error)

// MaxPrefixBytes bounds a store's Prefix.
const MaxPrefixBytes = 64

type store struct {
	call    Caller
	binding string
	prefix  string
}

func (s store) op(ctx context.Context, object string, arg map[string]any) (*reply, error) {
	out, err := callRaw(ctx, s, object, arg)
	if err != nil {
		return nil, err
	}
	var r reply
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		return nil, fmt.Errorf("durable: malformed reply from %s: %v", object, err)
	}
	return &r, nil
}

// callRaw calls op on the object named object (with the store's prefix)
// and returns its reply as sent.
func callRaw(ctx context.Context, s store, object string, arg map[string]any) (string, error) {
	if s.call == nil {
		return "", errors.New("durable: nil Caller")
	}
	if len(s.prefix) > MaxPrefixBytes {
		return "", fmt.Errorf("durable: a Prefix of %d bytes, at most %d", len(s.prefix), MaxPrefixBytes)
	}
	if s.prefix != "" {
		arg["px"] = s.prefix
		object = s.prefix + object
	}
	b, err := json.Marshal(arg)
	if err != nil {
		return "", err
	}
	binding := s.binding
	if binding == "" {
		binding = DefaultBinding
	}
	return s.call(ctx, binding, object, "op", string(b))
}

// reply is what McpfnState.op returns.
type reply struct {
	OK      bool            `json:"ok"`
	Error   string          `json:"error"`
	Evicted []string        `json:"evicted"`
	Rec     json.RawMessage `json:"rec"`
	Ver     int64           `json:"ver"`
	Reason  string          `json:"reason"`
	Limit   int64           `json:"limit"`
	RetryAt int64           `json:"retryAt"`
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func nsString(t time.Time) string { return strconv.FormatInt(t.UnixNano(), 10) }

func parseNs(s string) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// Sessions is a core.SessionStore in Durable Objects.
type Sessions struct {
	// Call reaches the objects.
	Call Caller
	// Binding is the McpfnState namespace's binding; empty means
	// DefaultBinding.
	Binding string
	// Prefix starts the name of every object the store uses, so that
	// several stores (several servers, or tests) share a namespace without
	// sharing objects. At most MaxPrefixBytes.
	Prefix string
}

var _ core.SessionStore = (*Sessions)(nil)

type sessionWire struct {
	ID        string `json:"id"`
	Principal string `json:"p"`
	Data      string `json:"data"`
	LU        int64  `json:"lu"`
	LUNs      string `json:"luNs"`
	EX        int64  `json:"ex"`
	EXNs      string `json:"exNs"`
	Ver       int64  `json:"ver,omitempty"`
}

func (s *Sessions) st() store { return store{s.Call, s.Binding, s.Prefix} }

// Create implements core.SessionStore.
func (s *Sessions) Create(ctx context.Context, rec *core.SessionRecord, lim core.SessionLimits) ([]string, error) {
	if len(rec.Data) > MaxRecordBytes {
		return nil, fmt.Errorf("durable: session data of %d bytes, at most %d", len(rec.Data), MaxRecordBytes)
	}
	limit := lim.PerPrincipal
	if rec.Principal == "" {
		limit = lim.Anonymous
	}
	w := sessionWire{ID: rec.ID, Principal: rec.Principal, Data: string(rec.Data),
		LU: ms(rec.LastUsed), LUNs: nsString(rec.LastUsed), EX: ms(rec.Expires), EXNs: nsString(rec.Expires)}
	r, err := s.st().op(ctx, "sp:"+rec.Principal, map[string]any{
		"op": "sessionCreate", "id": rec.ID, "pool": rec.Principal, "rec": w, "now": ms(time.Now()), "limit": limit})
	if err != nil {
		return nil, fmt.Errorf("durable: session create: %w", err)
	}
	if !r.OK {
		return nil, fmt.Errorf("durable: session create: %s", r.Error)
	}
	rec.Version = 1
	return r.Evicted, nil
}

// Get implements core.SessionStore.
func (s *Sessions) Get(ctx context.Context, id string) (*core.SessionRecord, error) {
	r, err := s.st().op(ctx, "s:"+id, map[string]any{"op": "sessionGet", "id": id})
	if err != nil {
		return nil, fmt.Errorf("durable: session get: %w", err)
	}
	if !r.OK {
		return nil, sessionError(r.Error)
	}
	var w sessionWire
	if err := json.Unmarshal(r.Rec, &w); err != nil {
		return nil, fmt.Errorf("durable: session get: %v", err)
	}
	return &core.SessionRecord{ID: w.ID, Principal: w.Principal, Data: []byte(w.Data), Version: w.Ver,
		LastUsed: parseNs(w.LUNs), Expires: parseNs(w.EXNs)}, nil
}

// Update implements core.SessionStore.
func (s *Sessions) Update(ctx context.Context, rec *core.SessionRecord) error {
	if len(rec.Data) > MaxRecordBytes {
		return fmt.Errorf("durable: session data of %d bytes, at most %d", len(rec.Data), MaxRecordBytes)
	}
	r, err := s.st().op(ctx, "s:"+rec.ID, map[string]any{"op": "sessionUpdate", "id": rec.ID, "ver": rec.Version,
		"data": string(rec.Data), "lu": ms(rec.LastUsed), "luNs": nsString(rec.LastUsed), "ex": ms(rec.Expires), "exNs": nsString(rec.Expires)})
	if err != nil {
		return fmt.Errorf("durable: session update: %w", err)
	}
	if !r.OK {
		return sessionError(r.Error)
	}
	rec.Version = r.Ver
	return nil
}

// Delete implements core.SessionStore.
func (s *Sessions) Delete(ctx context.Context, id string) error {
	r, err := s.st().op(ctx, "s:"+id, map[string]any{"op": "sessionDelete", "id": id})
	if err != nil {
		return fmt.Errorf("durable: session delete: %w", err)
	}
	if !r.OK {
		return sessionError(r.Error)
	}
	return nil
}

func sessionError(code string) error {
	switch code {
	case "not_found":
		return fmt.Errorf("durable: %w", core.ErrSessionNotFound)
	case "conflict":
		return fmt.Errorf("durable: %w", core.ErrSessionConflict)
	}
	return fmt.Errorf("durable: session: %s", code)
}

// Tasks is a core.TaskStore in Durable Objects.
type Tasks struct {
	// Call reaches the objects.
	Call Caller
	// Binding is the McpfnState namespace's binding; empty means
	// DefaultBinding.
	Binding string
	// Prefix starts the name of every object the store uses, so that
	// several stores (several servers, or tests) share a namespace without
	// sharing objects. At most MaxPrefixBytes.
	Prefix string
}

var _ core.TaskStore = (*Tasks)(nil)

func (s *Tasks) st() store { return store{s.Call, s.Binding, s.Prefix} }

func encodeTask(rec *core.TaskRecord) (string, error) {
	v := rec.Version
	rec.Version = 0
	b, err := json.Marshal(rec)
	rec.Version = v
	if err != nil {
		return "", err
	}
	if len(b) > MaxRecordBytes {
		return "", fmt.Errorf("durable: task record of %d bytes, at most %d: %w", len(b), MaxRecordBytes, core.ErrTaskTooLarge)
	}
	return string(b), nil
}

// Create implements core.TaskStore.
func (s *Tasks) Create(ctx context.Context, rec *core.TaskRecord, limits core.TaskLimits) error {
	b, err := encodeTask(rec)
	if err != nil {
		return err
	}
	r, err := s.st().op(ctx, "tp:"+rec.Principal, map[string]any{"op": "taskCreate", "id": rec.ID, "rec": b,
		"ex": ms(rec.Expires), "now": ms(time.Now()), "charge": rec.Charge,
		"limits": map[string]any{"tasks": limits.Tasks, "bytes": limits.Bytes}})
	if err != nil {
		return fmt.Errorf("durable: task create: %w", err)
	}
	if !r.OK {
		if r.Error == "limit" {
			e := &core.TaskLimitError{Reason: r.Reason, Limit: r.Limit}
			if r.RetryAt > 0 {
				e.RetryAt = time.UnixMilli(r.RetryAt)
			}
			return e
		}
		return taskError(r.Error)
	}
	rec.Version = 1
	return nil
}

// Get implements core.TaskStore.
func (s *Tasks) Get(ctx context.Context, id string) (*core.TaskRecord, error) {
	r, err := s.st().op(ctx, "t:"+id, map[string]any{"op": "taskGet", "id": id})
	if err != nil {
		return nil, fmt.Errorf("durable: task get: %w", err)
	}
	if !r.OK {
		return nil, taskError(r.Error)
	}
	var raw string
	if err := json.Unmarshal(r.Rec, &raw); err != nil {
		return nil, fmt.Errorf("durable: task get: %v", err)
	}
	rec := &core.TaskRecord{}
	if err := json.Unmarshal([]byte(raw), rec); err != nil {
		return nil, fmt.Errorf("durable: decoding task: %v", err)
	}
	rec.Version = r.Ver
	return rec, nil
}

// Update implements core.TaskStore.
func (s *Tasks) Update(ctx context.Context, rec *core.TaskRecord) error {
	b, err := encodeTask(rec)
	if err != nil {
		return err
	}
	r, err := s.st().op(ctx, "t:"+rec.ID, map[string]any{"op": "taskUpdate", "id": rec.ID, "ver": rec.Version,
		"rec": b, "ex": ms(rec.Expires)})
	if err != nil {
		return fmt.Errorf("durable: task update: %w", err)
	}
	if !r.OK {
		return taskError(r.Error)
	}
	rec.Version = r.Ver
	return nil
}

func taskError(code string) error {
	switch code {
	case "not_found":
		return fmt.Errorf("durable: %w", core.ErrTaskNotFound)
	case "conflict":
		return fmt.Errorf("durable: %w", core.ErrTaskConflict)
	case "too_large":
		return fmt.Errorf("durable: %w", core.ErrTaskTooLarge)
	}
	return fmt.Errorf("durable: task: %s", code)
}

// Runner is a core.TaskRunner that runs tasks from their Durable Objects'
// alarms, each in a request of its own (see the package documentation).
type Runner struct {
	// Call reaches the objects.
	Call Caller
	// Binding is the McpfnState namespace's binding; empty means
	// DefaultBinding.
	Binding string
	// Prefix starts the name of every object the store uses, so that
	// several stores (several servers, or tests) share a namespace without
	// sharing objects. At most MaxPrefixBytes.
	Prefix string
}

var _ core.TaskRunner = (*Runner)(nil)

// Start implements core.TaskRunner: it asks the task's object to run it.
func (s *Runner) Start(ctx context.Context, id string) error {
	r, err := store{s.Call, s.Binding, s.Prefix}.op(ctx, "t:"+id, map[string]any{"op": "taskSchedule", "id": id})
	if err != nil {
		return fmt.Errorf("durable: scheduling task %s: %w", id, err)
	}
	if !r.OK {
		return taskError(r.Error)
	}
	return nil
}
