package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpfn/mcpfn/mcp"
)

// Task errors. Stores return them wrapped with %w; callers test with
// errors.Is.
var (
	// ErrTaskNotFound: no task has the id, or it has expired (a record
	// whose Expires has passed is absent for every operation, whether or
	// not the store has deleted it yet).
	ErrTaskNotFound = errors.New("task not found")
	// ErrTaskConflict: a conditional write lost (the stored Version is not
	// the record's), or Create found the id in use. The caller re-reads
	// and decides again.
	ErrTaskConflict = errors.New("task changed concurrently")
	// ErrTaskLimit: Create found the principal at one of its bounds (the
	// number or the bytes of its tasks: TaskLimits), or the store full.
	// Stores return it as a *TaskLimitError, which says which bound and
	// when to try again.
	ErrTaskLimit = errors.New("too many tasks")
	// ErrTaskTooLarge: the record exceeds the store's size limit (a
	// DynamoDB item is at most 400 KB). Nothing was written.
	ErrTaskTooLarge = errors.New("task record too large")
)

// TaskLimits bound the unexpired tasks (whatever their status) of the
// principal a TaskStore.Create is for.
type TaskLimits struct {
	// Tasks bounds their number; zero or less means no bound.
	Tasks int
	// Bytes bounds the sum of their Charge; zero or less means no bound.
	Bytes int64
}

// Reasons of a TaskLimitError.
const (
	// TaskLimitCount: the principal has TaskLimits.Tasks unexpired tasks.
	TaskLimitCount = "too_many_tasks"
	// TaskLimitBytes: the principal's unexpired tasks would charge more
	// than TaskLimits.Bytes.
	TaskLimitBytes = "too_many_task_bytes"
	// TaskLimitStoreFull: the store holds as many bytes as it may (the
	// in-memory store's bound of the whole process).
	TaskLimitStoreFull = "task_store_full"
)

// TaskLimitError is the error a TaskStore's Create returns when a bound
// refuses the task; errors.Is(err, ErrTaskLimit) holds for it. Core
// answers the call with a CodeLimitExceeded error carrying Reason, Limit
// and the wait until RetryAt.
type TaskLimitError struct {
	// Reason is TaskLimitCount, TaskLimitBytes or TaskLimitStoreFull.
	Reason string
	// Limit is the bound that refused: a number of tasks or of bytes.
	Limit int64
	// RetryAt is when the store expects room: the earliest expiry among
	// the tasks that fill the bound. Zero when unknown.
	RetryAt time.Time
}

func (e *TaskLimitError) Error() string {
	switch e.Reason {
	case TaskLimitBytes:
		return fmt.Sprintf("the caller's tasks would hold more than %d bytes", e.Limit)
	case TaskLimitStoreFull:
		return fmt.Sprintf("the task store holds %d bytes, its bound", e.Limit)
	}
	return fmt.Sprintf("the caller has %d unexpired tasks, the bound", e.Limit)
}

// Is reports whether target is ErrTaskLimit.
func (e *TaskLimitError) Is(target error) bool { return target == ErrTaskLimit }

// TaskRecord is the stored form of a task of the Tasks extension
// (io.modelcontextprotocol/tasks): what any instance needs to answer
// tasks/get, tasks/update and tasks/cancel and to run the task's handler
// again, from the top, with the answers gathered so far (the handler is
// re-entrant, as for multi round-trip requests). Stores keep every field
// and interpret only ID, Principal, Version and Expires; the JSON tags are
// a compact encoding a store may use for the whole record.
//
// A TaskRecord holds the call's arguments and results, and the caller's
// identity (never a credential).
type TaskRecord struct {
	// Charge is what the task counts against its principal's bound of
	// task bytes (TaskLimits.Bytes): the bytes of the caller's input the
	// record holds when it is created (arguments, capabilities, client
	// information, answers gathered before the task). Core sets it
	// before Create and never changes it; stores sum it per principal.
	Charge int64 `json:"ch,omitempty"`
	// ID is the taskId: 32 random bytes, base64url (tasks.md §Security
	// Considerations: unguessable).
	ID string `json:"id"`
	// Principal is the owner's key (a hash of issuer, client and subject;
	// "" for anonymous callers): a task answers only requests of the same
	// principal, and the per-principal bound counts by it.
	Principal string `json:"p,omitempty"`
	// Caller is the principal that created the task, given to the handler
	// when it runs (Request.Principal); nil for anonymous callers.
	Caller *Principal `json:"c,omitempty"`

	// Method is the task-augmented request's method ("tools/call"), Name
	// its target (the tool name), Arguments its raw arguments object.
	Method    string          `json:"m"`
	Name      string          `json:"n"`
	Arguments json.RawMessage `json:"a,omitempty"`
	// ProtocolVersion, ClientCapabilities (raw JSON, nil for none) and
	// ClientInfo (raw JSON, or nil) are those of the creating request: the
	// handler sees them again, and input requests are checked against the
	// capabilities.
	ProtocolVersion    string          `json:"v"`
	ClientCapabilities json.RawMessage `json:"cc,omitempty"`
	ClientInfo         json.RawMessage `json:"ci,omitempty"`

	// Status is the task's status; StatusMessage its optional message.
	Status        mcp.TaskStatus `json:"s"`
	StatusMessage string         `json:"sm,omitempty"`

	// InputRequests are the outstanding requests of an input_required
	// task, by wire key (each an mcp.InputRequest as JSON); empty
	// otherwise. InputKeys maps each wire key of the current round to the
	// key the handler asked it under (they differ only when the handler
	// reused a key of an earlier round: wire keys are unique over a task's
	// life, tasks.md §Task Update Requests).
	InputRequests map[string]json.RawMessage `json:"ir,omitempty"`
	InputKeys     map[string]string          `json:"ik,omitempty"`
	// InputResponses are the answers received for the current round's
	// keys (by wire key), kept until every outstanding key is answered.
	// When the task runs again the handler sees them in Request.Input
	// (under its own keys), with InputState as Input.State(); Round counts
	// the rounds that asked for input (MaxInputRounds bounds it).
	InputResponses map[string]json.RawMessage `json:"ia,omitempty"`
	InputState     string                     `json:"is,omitempty"`
	Round          int                        `json:"r,omitempty"`
	// UsedKeys are every wire key issued over the task's life.
	UsedKeys []string `json:"uk,omitempty"`

	// Result is the final result of a completed task, as tasks/get
	// inlines it (for tools/call a 2026-07-28 CallToolResult with
	// resultType "complete" and the tool's own _meta); Error the JSON-RPC
	// error object of a failed one.
	Result json.RawMessage `json:"res,omitempty"`
	Error  json.RawMessage `json:"err,omitempty"`

	// Created, Updated and Expires are the creation time, the time of the
	// last change of status, message or payload (lastUpdatedAt), and the
	// end of the task's life (Created plus its TTL): a store keeps the
	// record at least until Expires and answers ErrTaskNotFound after it.
	Created time.Time `json:"ct"`
	Updated time.Time `json:"ut"`
	Expires time.Time `json:"et"`

	// Version is the optimistic-concurrency counter, managed by the store:
	// 1 after Create, incremented by every successful Update. Every
	// transition is a compare-and-set on it.
	Version int64 `json:"ver"`

	// Runner identifies the run that holds the task (a random id chosen by
	// the instance that claimed it), LeaseExpires when its claim ends
	// unless renewed (heartbeats renew it). A working task whose lease
	// has passed has lost its runner: the next reader moves it to failed.
	Runner       string    `json:"rn,omitempty"`
	LeaseExpires time.Time `json:"le,omitzero"`
	// CancelRequested is set by tasks/cancel; the runner holding the task
	// cancels the handler's context when it sees it.
	CancelRequested bool `json:"cx,omitempty"`
}

// Terminal reports whether the task has ended (completed, failed or
// cancelled). A terminal record never changes again but for Expires.
func (r *TaskRecord) Terminal() bool { return r.Status.Terminal() }

// TaskStore keeps the tasks of the Tasks extension so that any instance of
// a deployment serves them. It is designed for a shared store with
// conditional writes (DynamoDB): every read is strongly consistent (a task
// Create returned is found by the next Get on any instance: tasks.md §Task
// Creation, "durably created"), every transition is a compare-and-set on
// Version, and records expire by time.
//
// Implementations must be safe for concurrent use, across goroutines and,
// for shared stores, across processes, and return the sentinels
// ErrTaskNotFound, ErrTaskConflict, ErrTaskLimit and ErrTaskTooLarge
// (wrapped with %w). A failed operation changes nothing. The package
// store/storetest holds the tests every store must pass (RunTasks).
type TaskStore interface {
	// Create stores a new record; its Version becomes 1. It returns
	// ErrTaskConflict when the id is in use, ErrTaskTooLarge past the
	// store's size limit, and a *TaskLimitError (ErrTaskLimit) when
	// rec.Principal already has limits.Tasks records that have not
	// expired (whatever their status), or when their Charge and rec's
	// would together exceed limits.Bytes, or when the store is full.
	// Counting and inserting are one atomic step: concurrent Creates of
	// one principal never exceed the limits.
	Create(ctx context.Context, rec *TaskRecord, limits TaskLimits) error
	// Get returns the record with the given id, read strongly consistent,
	// or ErrTaskNotFound when it does not exist or has expired. The
	// caller owns the returned record.
	Get(ctx context.Context, id string) (*TaskRecord, error)
	// Update replaces the stored record by rec if the stored Version
	// still equals rec.Version, and then increments rec.Version. It
	// returns ErrTaskConflict when another writer got there first,
	// ErrTaskNotFound when the record is gone or expired, and
	// ErrTaskTooLarge past the size limit. ID and Principal never change.
	Update(ctx context.Context, rec *TaskRecord) error
}

// DefaultTaskTTL is a task's time to live (ttlMs) when
// ServerOptions.TaskTTL is zero: long enough for a person to answer an
// input request, short enough that a flood of tasks ages out within the
// hour.
const DefaultTaskTTL = time.Hour

// DefaultTaskPollInterval is the pollIntervalMs suggested to clients when
// ServerOptions.TaskPollInterval is zero. It is also how often a runner
// reads its task to see a cancellation made through another instance.
const DefaultTaskPollInterval = time.Second

// DefaultMaxTasksPerPrincipal bounds the unexpired tasks of one
// authenticated principal when ServerOptions.MaxTasksPerPrincipal is zero;
// DefaultMaxAnonymousTasks bounds those of all anonymous callers together.
const (
	DefaultMaxTasksPerPrincipal = 100
	DefaultMaxAnonymousTasks    = 1000
)

// DefaultMaxTaskBytesPerPrincipal bounds the Charge (the caller's input:
// arguments, capabilities, answers) of one authenticated principal's
// unexpired tasks when ServerOptions.MaxTaskBytesPerPrincipal is zero;
// DefaultMaxAnonymousTaskBytes bounds those of all anonymous callers
// together. A task keeps its arguments for its whole TTL, so a count bound
// alone lets a caller park count × 400 KB for an hour.
const (
	DefaultMaxTaskBytesPerPrincipal = 16 << 20
	DefaultMaxAnonymousTaskBytes    = 16 << 20
)

// DefaultMaxTaskAnswerBytes bounds the answers (tasks/update
// inputResponses) a task holds at once when
// ServerOptions.MaxTaskAnswerBytes is zero.
const DefaultMaxTaskAnswerBytes = 64 << 10

// DefaultMaxLocalTaskStoreBytes bounds the encoded records of the
// in-process task store a server uses when ServerOptions.TaskStore is nil:
// past it, Create is refused (TaskLimitStoreFull), whoever the caller.
const DefaultMaxLocalTaskStoreBytes = 64 << 20

// DefaultTaskLease is how long a runner's claim on a task lasts without a
// heartbeat when ServerOptions.TaskLease is zero; runners renew it every
// third of it. A task whose runner stopped (a killed instance, a frozen
// sandbox) is failed at most this long after its last heartbeat.
const DefaultTaskLease = 30 * time.Second

// DefaultTaskClaimTimeout is how long a task no run has claimed waits for
// its runner when ServerOptions.TaskClaimTimeout is zero: long enough for a
// queue behind busy workers or an asynchronous invocation that Lambda
// retries under throttling, short enough that a client polling a task no
// runner will ever take learns it within minutes.
const DefaultTaskClaimTimeout = 5 * time.Minute

// DefaultMaxTaskResultBytes bounds the encoded result or error a task
// keeps when ServerOptions.MaxTaskResultBytes is zero: below DynamoDB's
// 400 KB item limit with room for the rest of the record. A larger result
// fails the task with a -32603 error saying so.
const DefaultMaxTaskResultBytes = 256 << 10
