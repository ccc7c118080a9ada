package core

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
	"github.com/mcpfn/mcpfn/mcp"
)

// Tasks extension (io.modelcontextprotocol/tasks, ext-tasks
// specification/draft/tasks.md) on the 2026-07-28 era. See docs/tasks.md,
// "State machine", "Store layout" and "Runners".

// Aliases of the extension's wire vocabulary (package mcp).
type (
	// TaskStatus is mcp.TaskStatus.
	TaskStatus = mcp.TaskStatus
	// TaskSupport is mcp.TaskSupport.
	TaskSupport = mcp.TaskSupport
)

// Task support levels and statuses (see package mcp).
const (
	ExtensionTasks    = mcp.ExtensionTasks
	TaskForbidden     = mcp.TaskForbidden
	TaskOptional      = mcp.TaskOptional
	TaskRequired      = mcp.TaskRequired
	TaskWorking       = mcp.TaskWorking
	TaskInputRequired = mcp.TaskInputRequired
	TaskCompleted     = mcp.TaskCompleted
	TaskFailed        = mcp.TaskFailed
	TaskCancelled     = mcp.TaskCancelled
)

// startTaskError is what Request.StartTask returns (errStartTask) in the
// request phase of a tool registered with ToolOptions.DeferTask: the
// handler returns it and the server creates the task.
type startTaskError struct{}

func (startTaskError) Error() string { return "core: the call continues as a task" }

var errStartTask error = startTaskError{}

// StartTask marks the point where a call of a task tool registered with
// ToolOptions.DeferTask becomes a task. Before it, the handler runs inside
// the tools/call request, and input it asks for (InputRequired) is asked
// through multi round-trip requests (input_required with a sealed
// requestState: 2026-07-28 basic/patterns/mrtr), so a task is created only
// once that input is resolved (tasks.md §Task Creation, "SHOULD resolve
// all MRTR exchanges synchronously"). When the request declares the Tasks
// extension, StartTask returns an error the handler returns as is: the
// server then creates the task and runs the handler again, from the top,
// inside the task, with the same Input; there StartTask returns nil. It
// returns nil too when the call is not to become a task (a client that did
// not declare the extension calling an optional tool, a legacy client, a
// tool without DeferTask), so the handler simply continues.
func (r *Request) StartTask() error {
	if r.taskPhase == taskPhasePre {
		return errStartTask
	}
	return nil
}

// TaskID returns the id of the task the handler runs in, or "" when it runs
// inside a request.
func (r *Request) TaskID() string {
	if r.task == nil {
		return ""
	}
	return r.task.id
}

// taskPhase is where a task tool's handler runs.
type taskPhase uint8

const (
	taskPhaseNone taskPhase = iota // not a task (synchronous call)
	taskPhasePre                   // the request phase of a DeferTask tool
)

// declaresTasks reports whether the request declared the Tasks extension
// in its per-request capabilities (tasks.md §Capability Negotiation).
func (r *Request) declaresTasks() bool { return r.DeclaresExtension(ExtensionTasks) }

// missingTasks is the -32021 answer naming the Tasks extension.
func missingTasks() *Error { return MissingExtensionError(ExtensionTasks) }

// taskOpts are a server's task settings, defaults applied.
type taskOpts struct {
	ttl, poll, lease, claim time.Duration
	perPrincipal            int
	anonymous               int
	perPrincipalBytes       int64
	anonymousBytes          int64
	maxResult               int
	maxAnswers              int
}

// taskState is a server's task machinery.
type taskState struct {
	store  TaskStore
	runner TaskRunner
	local  *inProcessRunner // the default runner, nil when TaskRunner is set
	// running are the runs of this process, by task id: tasks/cancel
	// through this instance reaches them at once, without waiting for the
	// run's next read of the store.
	mu      sync.Mutex
	running map[string]*taskRun
}

func errorsIsNotFound(err error) bool { return errors.Is(err, ErrTaskNotFound) }

// newTaskID returns 32 random bytes, base64url.
func newTaskID() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// taskLimits are the bounds of p's unexpired tasks.
func (s *Server) taskLimits(p *Principal) TaskLimits {
	if p == nil {
		return TaskLimits{Tasks: s.tk.anonymous, Bytes: s.tk.anonymousBytes}
	}
	return TaskLimits{Tasks: s.tk.perPrincipal, Bytes: s.tk.perPrincipalBytes}
}

// taskOwner reports whether p may own tasks: anonymous callers (nil)
// share the anonymous pool, while an authenticated principal needs a
// client or a subject, or every token of its issuer would share one owner
// and read, answer and cancel each other's tasks (the rule legacy
// sessions follow: sessionOwner).
func taskOwner(p *Principal) bool { return sessionOwner(p) }

// errNoTaskOwner answers a call that must run as a task (TaskRequired) from
// a caller that cannot own one: 403, as initialize answers such a caller
// when sessions are required.
func errNoTaskOwner() *Error {
	return legacyError(http.StatusForbidden, CodeInvalidRequest,
		"Forbidden: the credentials name no client or subject to own a task")
}

// taskCharge is what rec counts against its principal's bound of task
// bytes: the caller's input it holds.
func taskCharge(rec *TaskRecord) int64 {
	n := len(rec.Arguments) + len(rec.ClientCapabilities) + len(rec.ClientInfo) + len(rec.InputState)
	for k, v := range rec.InputResponses {
		n += len(k) + len(v)
	}
	return int64(n)
}

// taskLimitExceeded is the answer to a creation a store refused by a
// bound: CodeLimitExceeded with the bound's reason, and the wait until
// the store expects room (at least the poll interval; the task TTL when
// the store cannot tell).
func (s *Server) taskLimitExceeded(le *TaskLimitError) *Error {
	wait := s.tk.ttl
	if !le.RetryAt.IsZero() {
		wait = time.Until(le.RetryAt)
	}
	wait = max(wait, s.tk.poll)
	var msg string
	switch le.Reason {
	case TaskLimitBytes:
		msg = fmt.Sprintf("Too many task bytes: this caller's unexpired tasks hold the server's limit of %d bytes of arguments; retry once earlier tasks expire", le.Limit)
	case TaskLimitStoreFull:
		msg = "The server holds as many tasks as it can; retry later"
	default:
		msg = fmt.Sprintf("Too many tasks: this caller has the server's limit of %d unexpired tasks; retry once earlier tasks expire", le.Limit)
	}
	return LimitExceededError(le.Reason, le.Limit, wait, "%s", msg)
}

// wireTime is the ISO 8601 form of t on the wire.
func wireTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// taskWire is the Task part of a record.
func (s *Server) taskWire(rec *TaskRecord) mcp.Task {
	ttl := rec.Expires.Sub(rec.Created).Milliseconds()
	poll := s.tk.poll.Milliseconds()
	return mcp.Task{
		TaskID: rec.ID, Status: rec.Status, StatusMessage: rec.StatusMessage,
		CreatedAt: wireTime(rec.Created), LastUpdatedAt: wireTime(rec.Updated),
		TTLMs: &ttl, PollIntervalMs: &poll,
	}
}

// appendTask appends the members of a DetailedTask (detailed) or of a Task,
// each followed by a comma.
func (s *Server) appendTask(b []byte, rec *TaskRecord, detailed bool) ([]byte, error) {
	tj, err := json.Marshal(s.taskWire(rec))
	if err != nil {
		return nil, err
	}
	b = append(append(b, tj[1:len(tj)-1]...), ',')
	if !detailed {
		return b, nil
	}
	switch rec.Status {
	case TaskInputRequired:
		b = append(b, `"inputRequests":{`...)
		for i, k := range sortedKeys(rec.InputRequests) {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(jsonwire.AppendString(b, k), ':')
			b = append(b, rec.InputRequests[k]...)
		}
		b = append(b, "},"...)
	case TaskCompleted:
		if len(rec.Result) > 0 {
			b = append(append(append(b, `"result":`...), rec.Result...), ',')
		}
	case TaskFailed:
		if len(rec.Error) > 0 {
			b = append(append(append(b, `"error":`...), rec.Error...), ',')
		}
	}
	return b, nil
}

// encodeCreateTask is the CreateTaskResult of a new task (tasks.md §Task
// Creation): resultType "task", the Task, serverInfo; no requestState.
func (s *Server) encodeCreateTask(r *Request, rec *TaskRecord) ([]byte, error) {
	b := append(make([]byte, 0, 320), `{"resultType":"task",`...)
	b, err := s.appendTask(b, rec, false)
	if err != nil {
		return nil, err
	}
	b = r.era.appendMeta(b, s, nil)
	b[len(b)-1] = '}'
	return b, nil
}

// createTask creates the task of a tools/call (after the call's checks and
// any multi round-trip phase), hands it to the runner and answers with its
// CreateTaskResult. The record is written before the answer: a tasks/get
// on any instance finds it (tasks.md §Task Creation, "durably created").
func (s *Server) createTask(ctx context.Context, r *Request, st *serverTool, p *CallToolParams) ([]byte, error) {
	now := time.Now()
	rec := &TaskRecord{
		ID: newTaskID(), Principal: r.Principal.key(), Caller: r.Principal,
		Method: "tools/call", Name: p.Name, Arguments: append(json.RawMessage(nil), p.Arguments...),
		ProtocolVersion: r.ProtocolVersion,
		Status:          TaskWorking,
		Created:         now, Updated: now, Expires: now.Add(s.tk.ttl),
		// Until a run claims it, LeaseExpires is the time by which one
		// must (TaskClaimTimeout).
		LeaseExpires: now.Add(s.tk.claim),
	}
	if c := r.declaredCaps(); c != nil {
		rec.ClientCapabilities, _ = json.Marshal(c)
	}
	if r.ClientInfo != nil {
		rec.ClientInfo, _ = json.Marshal(r.ClientInfo)
	}
	if in := r.Input; in != nil {
		if len(in.raw) > 0 {
			rec.InputResponses = make(map[string]json.RawMessage, len(in.raw))
			for k, v := range in.raw {
				rec.InputResponses[k] = append(json.RawMessage(nil), v...)
			}
		}
		rec.InputState, rec.Round = in.state, in.round
	}
	rec.Charge = taskCharge(rec)
	limits := s.taskLimits(r.Principal)
	if limits.Bytes > 0 && rec.Charge > limits.Bytes {
		// No wait makes room for it: the call itself is too large.
		return nil, InvalidParamsError("Invalid params: the call's arguments (%d bytes) exceed the server's limit of task bytes (%d)", rec.Charge, limits.Bytes)
	}
	// Take a place in the in-process runner first: a record the runner
	// then refused would count against the caller's bounds for its TTL.
	var ticket *runTicket
	if s.tk.local != nil {
		var err error
		if ticket, err = s.tk.local.reserve(rec.Principal); err != nil {
			return nil, s.startError(ctx, rec, err)
		}
		defer ticket.release()
	}
	if err := s.tk.store.Create(ctx, rec, limits); err != nil {
		var le *TaskLimitError
		switch {
		case errors.As(err, &le):
			// A sharded store refuses at a shard's share: the client is
			// told the bound it was configured with.
			c := *le
			switch c.Reason {
			case TaskLimitCount:
				c.Limit = int64(limits.Tasks)
			case TaskLimitBytes:
				c.Limit = limits.Bytes
			}
			return nil, s.taskLimitExceeded(&c)
		case errors.Is(err, ErrTaskLimit):
			return nil, s.taskLimitExceeded(&TaskLimitError{Reason: TaskLimitCount, Limit: int64(limits.Tasks)})
		case errors.Is(err, ErrTaskTooLarge):
			return nil, InvalidParamsError("Invalid params: the call is too large to run as a task")
		}
		s.log.ErrorContext(ctx, "task store: create failed", "error", err.Error())
		return nil, internalf("the task could not be stored")
	}
	var err error
	if ticket != nil {
		err = ticket.start(rec.ID, rec.LeaseExpires)
	} else {
		err = s.tk.runner.Start(ctx, rec.ID)
	}
	if err != nil {
		s.finishTask(context.WithoutCancel(ctx), rec.ID, "", taskOutcome{status: TaskFailed, err: internalf("the task could not be started")})
		return nil, s.startError(ctx, rec, err)
	}
	return s.encodeCreateTask(r, rec)
}

// startTask hands rec (resumed by tasks/update) to the runner: the
// in-process pool queues it behind the principal's share of the workers
// until its claim deadline (rec.LeaseExpires). An error is the answer for
// the client (startError).
func (s *Server) startTask(ctx context.Context, rec *TaskRecord) error {
	var err error
	if s.tk.local != nil {
		err = s.tk.local.start(rec.Principal, rec.ID, rec.LeaseExpires)
	} else {
		err = s.tk.runner.Start(ctx, rec.ID)
	}
	if err != nil {
		return s.startError(ctx, rec, err)
	}
	return nil
}

// startError is the answer to a task the runner did not take:
// CodeLimitExceeded when it is busy (ErrTaskRunnerBusy), -32603 otherwise
// (logged).
func (s *Server) startError(ctx context.Context, rec *TaskRecord, err error) error {
	switch {
	case errors.Is(err, ErrTaskRunnerBusy):
		s.log.WarnContext(ctx, "task runner: busy, task refused", "task", logTaskID(rec.ID))
		return LimitExceededError("task_workers_busy", 0, s.tk.poll*5, "The server's task workers are busy; retry later")
	}
	s.log.ErrorContext(ctx, "task runner: start failed", "task", logTaskID(rec.ID), "error", err.Error())
	return internalf("the task could not be started")
}

// taskTarget reads the taskId of a tasks/* request. The request declared
// the extension: its methods are gated like every extension's
// (extension.go; tasks.md §Error Handling: -32021 for non-declaring
// clients).
func (s *Server) taskTarget(r *Request, params []byte, own func(k, v []byte) error) (string, error) {
	var id string
	var has bool
	var perr error
	jsonwire.EachMember(params, func(k, v []byte) bool {
		if jsonwire.KeyIs(k, "taskId") {
			id, has = jsonwire.RawString(v)
			if !has {
				perr = InvalidParamsError("Invalid params: taskId must be a string")
			}
		} else if own != nil {
			perr = own(k, v)
		}
		return perr == nil
	})
	if perr != nil {
		return "", perr
	}
	if !has {
		return "", InvalidParamsError("Invalid params: taskId is required")
	}
	if !validTaskID(id) {
		return "", errTaskNotFound() // no store holds it: none is asked
	}
	return id, nil
}

// taskEngine is a server's task settings and machinery.
type taskEngine struct {
	taskOpts
	taskState
}

// initTasks applies the task defaults and sets up the store and runner.
func (s *Server) initTasks() {
	o := &s.opts
	t := &s.tk
	t.ttl = cmp.Or(o.TaskTTL, DefaultTaskTTL)
	t.poll = cmp.Or(o.TaskPollInterval, DefaultTaskPollInterval)
	t.lease = cmp.Or(o.TaskLease, DefaultTaskLease)
	t.claim = cmp.Or(o.TaskClaimTimeout, DefaultTaskClaimTimeout)
	t.maxResult = cmp.Or(o.MaxTaskResultBytes, DefaultMaxTaskResultBytes)
	t.maxAnswers = cmp.Or(o.MaxTaskAnswerBytes, DefaultMaxTaskAnswerBytes)
	t.perPrincipal = cmp.Or(o.MaxTasksPerPrincipal, DefaultMaxTasksPerPrincipal)
	t.anonymous = cmp.Or(o.MaxAnonymousTasks, DefaultMaxAnonymousTasks)
	t.perPrincipalBytes = cmp.Or(o.MaxTaskBytesPerPrincipal, DefaultMaxTaskBytesPerPrincipal)
	t.anonymousBytes = cmp.Or(o.MaxAnonymousTaskBytes, DefaultMaxAnonymousTaskBytes)
	t.store = o.TaskStore
	if t.store == nil {
		t.store = &MemoryTaskStore{MaxTotalBytes: cmp.Or(o.MaxLocalTaskStoreBytes, DefaultMaxLocalTaskStoreBytes)}
	}
	t.runner = o.TaskRunner
	if t.runner == nil {
		workers := cmp.Or(o.TaskWorkers, DefaultTaskWorkers)
		t.local = newInProcessRunner(s, workers, cmp.Or(o.TaskWorkersPerPrincipal, max(1, workers/4)))
		t.runner = t.local
	}
	t.running = map[string]*taskRun{}
}

// servesTasks reports whether a tool of reg may run as a task.
func (s *Server) servesTasks(reg *registry) bool {
	for _, st := range reg.modernTools {
		if st.taskSupport == TaskOptional || st.taskSupport == TaskRequired {
			return true
		}
	}
	return false
}

// logTaskID is the part of a task id logs show: task ids are unguessable
// handles (tasks.md §Security Considerations), and a log reader must not
// be able to use one.
func logTaskID(id string) string {
	if len(id) > 8 {
		return id[:8] + "…"
	}
	return id
}
