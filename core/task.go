package core

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
	"github.com/mcpfn/mcpfn/mcp"
)

// Tasks extension (io.modelcontextprotocol/tasks, ext-tasks
// specification/draft/tasks.md) on the 2026-07-28 era. See docs/design.md,
// "Tasks", for the state machine, the store layout and the runners.

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
func (r *Request) declaresTasks() bool {
	c := r.declaredCaps()
	if c == nil {
		return false
	}
	_, ok := c.Extensions[ExtensionTasks]
	return ok
}

// missingTasks is the -32021 answer naming the Tasks extension.
func missingTasks() *Error {
	return MissingCapabilityError(&ClientCapabilities{Extensions: map[string]map[string]any{ExtensionTasks: {}}})
}

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

// taskTarget reads the taskId of a tasks/* request, after checking that the
// request declared the extension (tasks.md §Error Handling: -32021 for
// non-declaring clients).
func (s *Server) taskTarget(r *Request, params []byte, own func(k, v []byte) error) (string, error) {
	if !r.declaresTasks() {
		return "", missingTasks()
	}
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

// maxTaskIDBytes bounds the task ids the server looks up. Core issues
// 43-byte ids (newTaskID); the bound leaves room for a store of the
// future, and is far below any store's key limit (DynamoDB: 2,048 bytes).
const maxTaskIDBytes = 128

// validTaskID reports whether id could have been issued by core: 1 to
// maxTaskIDBytes bytes of the base64url alphabet. Requests naming any
// other id are answered as for an unknown one without reading the store
// (tasks.md §Error Handling: -32602), so that no client-chosen string of
// any size or alphabet reaches a store key.
func validTaskID(id string) bool {
	if len(id) == 0 || len(id) > maxTaskIDBytes {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// errTaskNotFound is the answer for an unknown, expired or other
// principal's task: the same -32602 for all three, so that a caller learns
// nothing of tasks not its own (tasks.md §Error Handling, §Security
// Considerations).
func errTaskNotFound() *Error {
	return InvalidParamsError("Failed to retrieve task: Task not found or expired")
}

// taskStoreFailure is the answer when the task store fails.
func (s *Server) taskStoreFailure(ctx context.Context, op string, err error) *Error {
	s.log.ErrorContext(ctx, "task store: "+op+" failed", "error", err.Error())
	return internalf("the task store is unavailable")
}

// loadTask reads the caller's task id, failing a working task whose runner
// is gone.
func (s *Server) loadTask(ctx context.Context, r *Request, id string) (*TaskRecord, error) {
	rec, err := s.tk.store.Get(ctx, id)
	if errors.Is(err, ErrTaskNotFound) {
		return nil, errTaskNotFound()
	}
	if err != nil {
		return nil, s.taskStoreFailure(ctx, "get", err)
	}
	if rec.Principal != r.Principal.key() || !taskOwner(r.Principal) {
		return nil, errTaskNotFound()
	}
	if s.runnerLost(rec, time.Now()) {
		if f := s.failLost(ctx, rec); f != nil {
			rec = f
		}
	}
	return rec, nil
}

// runnerLost reports whether a working task has no live runner: the lease
// of the run that claimed it has passed, or no run claimed it by its claim
// deadline (both are LeaseExpires: a claim replaces the deadline by the
// lease). A record without a deadline waits TaskClaimTimeout from its last
// change.
func (s *Server) runnerLost(rec *TaskRecord, now time.Time) bool {
	if rec.Status != TaskWorking {
		return false
	}
	if rec.Runner != "" || !rec.LeaseExpires.IsZero() {
		return now.After(rec.LeaseExpires)
	}
	return now.Sub(rec.Updated) > s.tk.claim
}

// failLost moves a working task whose runner is gone to failed (to
// cancelled when a cancellation was requested); it returns the record as
// stored afterwards, or nil when it could not tell.
func (s *Server) failLost(ctx context.Context, rec *TaskRecord) *TaskRecord {
	for range 4 {
		now := time.Now()
		if !s.runnerLost(rec, now) {
			return rec
		}
		o := taskOutcome{status: TaskFailed, err: internalf("the task's runner stopped before the task finished")}
		what := "task failed: its runner stopped"
		if rec.Runner == "" {
			o.err = internalf("no runner took the task within the server's claim timeout")
			what = "task failed: no runner took it"
		}
		if rec.CancelRequested {
			o = taskOutcome{status: TaskCancelled} // the client asked for it
		}
		setOutcome(rec, o, now)
		err := s.tk.store.Update(ctx, rec)
		if err == nil {
			s.log.WarnContext(ctx, what, "task", logTaskID(rec.ID))
			return rec
		}
		if !errors.Is(err, ErrTaskConflict) {
			return nil
		}
		if rec, err = s.tk.store.Get(ctx, rec.ID); err != nil {
			return nil
		}
	}
	return nil
}

// getTask answers tasks/get: the task's DetailedTask, resultType "complete"
// (tasks.md §Task Polling). It reads the store only: polling runs nothing.
func (s *Server) getTask(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	id, err := s.taskTarget(r, params, nil)
	if err != nil {
		return nil, err
	}
	rec, err := s.loadTask(ctx, r, id)
	if err != nil {
		return nil, err
	}
	b := append(make([]byte, 0, 320+len(rec.Result)+len(rec.Error)), `{"resultType":"complete",`...)
	if b, err = s.appendTask(b, rec, true); err != nil {
		return nil, err
	}
	b = r.era.appendMeta(b, s, nil)
	b[len(b)-1] = '}'
	return b, nil
}

// ackTask is the empty acknowledgement of tasks/update and tasks/cancel.
func (s *Server) ackTask(r *Request) []byte {
	b := append(make([]byte, 0, 128), '{')
	b = r.resultTail(b, "", nil, nil)
	return append(b, '}')
}

// maxTaskAttempts bounds the compare-and-set retries of one transition.
const maxTaskAttempts = 8

// answerBytes is the size of the answers a task holds.
func answerBytes(m map[string]json.RawMessage) int {
	n := 0
	for k, v := range m {
		n += len(k) + len(v)
	}
	return n
}

// updateTask answers tasks/update (tasks.md §Task Update Requests): the
// answers to outstanding keys are kept, others ignored; once every
// outstanding key is answered the task is working again and goes to the
// runner, which runs the handler with the answers.
func (s *Server) updateTask(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	var answers map[string]json.RawMessage
	id, err := s.taskTarget(r, params, func(k, v []byte) error {
		if !jsonwire.KeyIs(k, "inputResponses") || jsonwire.IsNull(v) {
			return nil
		}
		if !jsonwire.IsObject(v) {
			return InvalidParamsError("Invalid params: inputResponses must be an object")
		}
		if err := checkArguments("inputResponses", v); err != nil {
			return err
		}
		answers = map[string]json.RawMessage{}
		jsonwire.EachMember(v, func(ik, iv []byte) bool {
			key, _ := jsonwire.KeyString(ik)
			answers[key] = iv
			return true
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	rec, err := s.loadTask(ctx, r, id)
	if err != nil {
		return nil, err
	}
	for range maxTaskAttempts {
		if rec.Status != TaskInputRequired {
			return s.ackTask(r), nil
		}
		took := false
		for k, v := range answers {
			if _, outstanding := rec.InputRequests[k]; !outstanding || !jsonwire.IsObject(v) {
				continue // unknown, answered or superseded keys are ignored
			}
			if rec.InputResponses == nil {
				rec.InputResponses = map[string]json.RawMessage{}
			}
			rec.InputResponses[k] = append(json.RawMessage(nil), v...)
			delete(rec.InputRequests, k)
			took = true
		}
		if !took {
			return s.ackTask(r), nil
		}
		if n := answerBytes(rec.InputResponses); n > s.tk.maxAnswers {
			return nil, InvalidParamsError("Invalid params: the task's answers (%d bytes) exceed the server's limit of %d bytes", n, s.tk.maxAnswers)
		}
		now := time.Now()
		rec.Updated = now
		resume := len(rec.InputRequests) == 0
		if resume {
			rec.Status, rec.StatusMessage = TaskWorking, ""
			rec.InputRequests, rec.Runner = nil, ""
			rec.LeaseExpires = now.Add(s.tk.claim) // the claim deadline
		}
		err := s.tk.store.Update(ctx, rec)
		switch {
		case err == nil:
			s.publishTask(rec)
			if resume {
				if err := s.startTask(ctx, rec); err != nil {
					// The answers are kept; the task reports the failure.
					s.finishTask(context.WithoutCancel(ctx), rec.ID, "", taskOutcome{status: TaskFailed, err: internalf("the task could not be resumed")})
				}
			}
			return s.ackTask(r), nil
		case errors.Is(err, ErrTaskTooLarge):
			return nil, InvalidParamsError("Invalid params: the answers are too large for the task")
		case errors.Is(err, ErrTaskNotFound):
			return nil, errTaskNotFound()
		case !errors.Is(err, ErrTaskConflict):
			return nil, s.taskStoreFailure(ctx, "update", err)
		}
		if rec, err = s.loadTask(ctx, r, id); err != nil {
			return nil, err
		}
	}
	return nil, internalf("the task kept changing; retry")
}

// cancelTask answers tasks/cancel (tasks.md §Task Cancellation): an
// empty acknowledgement, for terminal tasks too. A task no runner holds
// (input_required, or working but not yet claimed) is cancelled at once; a
// running one is marked, and its runner cancels the handler's context: at
// once when it runs in this process, else when it next reads the store
// (every ServerOptions.TaskPollInterval).
func (s *Server) cancelTask(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	id, err := s.taskTarget(r, params, nil)
	if err != nil {
		return nil, err
	}
	rec, err := s.loadTask(ctx, r, id)
	if err != nil {
		return nil, err
	}
	for range maxTaskAttempts {
		if rec.Terminal() || rec.CancelRequested {
			s.signalCancel(id)
			return s.ackTask(r), nil
		}
		now := time.Now()
		held := rec.Status == TaskWorking && rec.Runner != "" && now.Before(rec.LeaseExpires)
		if held {
			rec.CancelRequested = true
		} else {
			setOutcome(rec, taskOutcome{status: TaskCancelled}, now)
		}
		err := s.tk.store.Update(ctx, rec)
		switch {
		case err == nil:
			if held {
				s.signalCancel(id)
			} else {
				s.publishTask(rec)
			}
			return s.ackTask(r), nil
		case errors.Is(err, ErrTaskNotFound):
			return nil, errTaskNotFound()
		case !errors.Is(err, ErrTaskConflict):
			return nil, s.taskStoreFailure(ctx, "update", err)
		}
		if rec, err = s.loadTask(ctx, r, id); err != nil {
			return nil, err
		}
	}
	return nil, internalf("the task kept changing; retry")
}

// signalCancel cancels the run of id in this process, if any.
func (s *Server) signalCancel(id string) {
	s.tk.mu.Lock()
	run := s.tk.running[id]
	s.tk.mu.Unlock()
	if run != nil {
		run.cancelRequested()
	}
}

// taskOutcome is how a run ends.
type taskOutcome struct {
	status TaskStatus
	result json.RawMessage // completed
	err    *Error          // failed
	ir     *InputRequiredError
}

// setOutcome applies a terminal outcome to rec (not input_required).
func setOutcome(rec *TaskRecord, o taskOutcome, now time.Time) {
	rec.Status, rec.Updated = o.status, now
	rec.Runner, rec.LeaseExpires = "", time.Time{}
	rec.InputRequests, rec.InputKeys, rec.InputResponses, rec.InputState = nil, nil, nil, ""
	rec.Result, rec.Error = nil, nil
	switch o.status {
	case TaskCompleted:
		rec.Result = o.result
		rec.StatusMessage = ""
	case TaskFailed:
		rec.Error, _ = json.Marshal(o.err)
		rec.StatusMessage = Truncate(o.err.Message, maxTaskStatusBytes)
	case TaskCancelled:
		rec.StatusMessage = "Cancelled at the client's request"
	}
}

// maxTaskStatusBytes bounds a task's statusMessage: a handler's progress
// message (Request.NotifyProgress) or a failure's message is cut to it
// (Truncate: at a character boundary, marked with the original length),
// so that no message can push the record past the store's size limit
// (which would stop the lease's renewal and lose the running task).
const maxTaskStatusBytes = 2048

// taskRun is one run of a task's handler in this process.
type taskRun struct {
	id     string
	runner string
	cancel context.CancelFunc

	mu        sync.Mutex
	cancelled bool   // the task was cancelled (not the run's context)
	message   string // the latest status message the handler set
	dirty     bool   // message not yet written
	// leaseUntil is when the run's lease ends, as last written to the
	// store (by the claim or a heartbeat).
	leaseUntil time.Time
}

func (t *taskRun) setLease(until time.Time) {
	t.mu.Lock()
	t.leaseUntil = until
	t.mu.Unlock()
}

func (t *taskRun) lease() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.leaseUntil
}

func (t *taskRun) cancelRequested() {
	t.mu.Lock()
	t.cancelled = true
	t.mu.Unlock()
	t.cancel()
}

func (t *taskRun) wasCancelled() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cancelled
}

// setStatus records a status message (progress of the handler), written to
// the store with the next heartbeat.
func (t *taskRun) setStatus(msg string) {
	msg = Truncate(msg, maxTaskStatusBytes)
	t.mu.Lock()
	if msg != t.message {
		t.message, t.dirty = msg, true
	}
	t.mu.Unlock()
}

func (t *taskRun) takeStatus() (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m, d := t.message, t.dirty
	t.dirty = false
	return m, d
}

// RunTask runs the task id's handler, on whichever instance the runner
// chose, and records its outcome. It is the entry point of every
// TaskRunner (the in-process pool calls it; a Lambda runner's bootstrap
// calls it for the asynchronous invocation's event).
//
// RunTask claims the task with a compare-and-set (a random run id and a
// lease of ServerOptions.TaskLease) and returns nil at once, running
// nothing, when the task is not runnable: unknown or expired (then
// ErrTaskNotFound), terminal, input_required, or held by another run's
// live lease. A task a run claimed whose lease has passed is not run
// again: its run stopped (a killed instance, a timed-out invocation the
// platform retries), and RunTask fails it (cancels it, when cancellation
// was requested), as a reader would. While the handler runs, RunTask reads the task every
// ServerOptions.TaskPollInterval: a cancellation made through any
// instance (tasks/cancel) cancels the handler's context, and a lost claim
// (another run took the task after this one's lease passed) cancels it and
// drops its outcome. It renews the lease every third of it and writes the
// status message the handler sets (Request.NotifyProgress's message). The
// outcome is written with a compare-and-set: a result (an isError result
// included) completes the task, a JSON-RPC error fails it, InputRequired
// moves it to input_required with the requests (to be answered by
// tasks/update; the handler then runs again, from the top, with the
// answers in Request.Input), a cancellation cancels it. When ctx ends
// before the handler returns (a platform deadline) the task fails.
//
// The outcome is stored before RunTask returns: a write that fails (the
// store unreachable) is tried again with growing pauses for as long as
// the run's lease allows, the lease being renewed meanwhile when the store
// takes that smaller write, so that a short outage loses no result (a
// client that finds the task failed would call the tool again and repeat
// its effects). The run's log record ("mcp task run") names the status
// stored, written only once it is stored.
//
// ctx is the run's own context (detached from any client request). When
// it has a deadline (a platform's), RunTask tries to store the outcome
// until at most finishGrace after it: runners leave that margin before
// their own end (the Lambda adapter leaves 2 s). RunTask returns when the
// handler has returned and the outcome is stored or given up. An error is
// a store failure (the task then ends failed when its lease passes) or
// ErrTaskNotFound.
func (s *Server) RunTask(ctx context.Context, id string) error {
	if !validTaskID(id) {
		return fmt.Errorf("core: run task: %w", ErrTaskNotFound)
	}
	run := &taskRun{id: id, runner: newTaskID()[:22]}
	rec, err := s.claimTask(ctx, id, run)
	if err != nil || rec == nil {
		return err
	}
	if rec.CancelRequested {
		_, err := s.finishTask(ctx, id, run.runner, taskOutcome{status: TaskCancelled})
		return err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	run.cancel = cancel
	s.tk.mu.Lock()
	s.tk.running[id] = run
	s.tk.mu.Unlock()
	defer func() {
		s.tk.mu.Lock()
		delete(s.tk.running, id)
		s.tk.mu.Unlock()
	}()

	beat := make(chan struct{})
	beatDone := make(chan struct{})
	go func() {
		defer close(beatDone)
		s.heartbeat(runCtx, run, beat)
	}()
	o := s.runHandler(runCtx, rec, run)
	close(beat)
	<-beatDone
	switch {
	case run.wasCancelled():
		o = taskOutcome{status: TaskCancelled}
	case ctx.Err() != nil:
		o = taskOutcome{status: TaskFailed, err: internalf("the task's run ended before its handler finished")}
	case runCtx.Err() != nil && o.status != TaskCompleted:
		// The claim was lost (another run holds the task): its outcome
		// is not this run's to write.
		return nil
	}
	stored, err := s.finishRun(ctx, run, o)
	switch {
	case err != nil:
		s.log.ErrorContext(ctx, "mcp task run: the outcome could not be stored", "task", logTaskID(id), "tool", rec.Name,
			"outcome", string(o.status), "error", err.Error())
	case stored != "":
		s.log.InfoContext(ctx, "mcp task run", "task", logTaskID(id), "tool", rec.Name, "status", string(stored))
	default:
		s.log.InfoContext(ctx, "mcp task run: the task ended elsewhere", "task", logTaskID(id), "tool", rec.Name, "outcome", string(o.status))
	}
	return err
}

// finishGrace is how long after its context's deadline a run may still
// try to store its outcome (see RunTask).
const finishGrace = time.Second

// Bounds of the pauses between attempts of a run's store writes (its
// claim, its outcome).
const (
	storeBackoffMin = 50 * time.Millisecond
	storeBackoffMax = 2 * time.Second
)

// storeBackoff spaces the attempts of a run's store write that failed:
// pauses doubling from storeBackoffMin to storeBackoffMax, each drawn
// from its upper half, so that the runs of instances that failed together
// do not try again together.
type storeBackoff struct{ d time.Duration }

// next returns the next pause.
func (b *storeBackoff) next() time.Duration {
	if b.d == 0 {
		b.d = storeBackoffMin
	}
	p := b.d/2 + mathrand.N(b.d/2+1)
	b.d = min(2*b.d, storeBackoffMax)
	return p
}

// maxStoreCall bounds one attempt of a run's store work (storeCall).
const maxStoreCall = 10 * time.Second

// storeCall bounds one attempt of a run's store work (its claim, a
// heartbeat, an attempt to store its outcome) to a third of the lease, at
// most maxStoreCall: a store that never answers (a network that drops
// packets rather than refusing them) must not hold a run, its worker and
// Server.Close for ever; the attempt fails, and is tried again as a store
// failure is.
func (s *Server) storeCall(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, max(min(s.tk.lease/3, maxStoreCall), 100*time.Millisecond))
}

// pause waits d, or until ctx ends (false).
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// finishRun stores the outcome of run (finishTask), trying again after
// transient failures until the run's lease (renewed meanwhile when the
// store allows), the deadline of ctx plus finishGrace, or five leases
// after the handler returned, whichever comes first; and at once when ctx
// is cancelled without a deadline (the server closing). It returns the
// status stored ("" when the task had ended otherwise: another run,
// a reader that found the lease passed).
func (s *Server) finishRun(ctx context.Context, run *taskRun, o taskOutcome) (TaskStatus, error) {
	wctx := context.WithoutCancel(ctx)
	hard := time.Now().Add(5 * s.tk.lease)
	// A platform's deadline does not stop the pauses (the attempts go on
	// until finishGrace past it); a cancellation without one does.
	waitCtx := ctx
	if dl, ok := ctx.Deadline(); ok {
		waitCtx = wctx
		if dl.Add(finishGrace).Before(hard) {
			hard = dl.Add(finishGrace)
		}
	}
	var backoff storeBackoff
	for {
		actx, cancel := s.storeCall(wctx)
		stored, err := s.finishTask(actx, run.id, run.runner, o)
		cancel()
		if err == nil || errors.Is(err, ErrTaskNotFound) {
			return stored, err
		}
		now := time.Now()
		if left := run.lease().Sub(now); left < s.tk.lease/3 {
			s.renewLease(wctx, run, now)
		}
		until := run.lease()
		if hard.Before(until) {
			until = hard
		}
		d := backoff.next()
		if now.Add(d).After(until) {
			return "", err
		}
		s.log.WarnContext(ctx, "task outcome not stored yet; trying again", "task", logTaskID(run.id), "error", err.Error(), "retry_in", d)
		if !pause(waitCtx, d) {
			return "", err
		}
	}
}

// renewLease extends run's lease in the store, if the run still holds
// the task.
func (s *Server) renewLease(ctx context.Context, run *taskRun, now time.Time) {
	ctx, cancel := s.storeCall(ctx)
	defer cancel()
	rec, err := s.tk.store.Get(ctx, run.id)
	if err != nil || rec.Runner != run.runner || rec.Terminal() {
		return
	}
	rec.LeaseExpires = now.Add(s.tk.lease)
	if s.tk.store.Update(ctx, rec) == nil {
		run.setLease(rec.LeaseExpires)
	}
}

// claimTask takes the task for run; nil, nil when it is not runnable. A
// store that fails (not a refusal: an error other than not found or a
// conflict) is tried again with growing pauses for up to a lease, so that
// a short outage at the start of a run does not leave the task to wait
// for a claim that no runner will make again.
func (s *Server) claimTask(ctx context.Context, id string, run *taskRun) (*TaskRecord, error) {
	giveUp := time.Now().Add(s.tk.lease)
	var backoff storeBackoff
	for {
		actx, cancel := s.storeCall(ctx)
		rec, err := s.claimOnce(actx, id, run)
		cancel()
		if err == nil || errors.Is(err, ErrTaskNotFound) || ctx.Err() != nil {
			return rec, err
		}
		d := backoff.next()
		if time.Now().Add(d).After(giveUp) {
			return nil, err
		}
		s.log.WarnContext(ctx, "task not claimed yet: the store failed; trying again", "task", logTaskID(id), "error", err.Error(), "retry_in", d)
		if !pause(ctx, d) {
			return nil, ctx.Err()
		}
	}
}

// claimOnce is one attempt of claimTask.
func (s *Server) claimOnce(ctx context.Context, id string, run *taskRun) (*TaskRecord, error) {
	for range maxTaskAttempts {
		rec, err := s.tk.store.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		now := time.Now()
		if rec.Status == TaskWorking && rec.Runner == run.runner {
			// An earlier attempt's claim landed although its answer was
			// lost.
			run.setLease(rec.LeaseExpires)
			return rec, nil
		}
		if rec.Status != TaskWorking || (rec.Runner != "" && now.Before(rec.LeaseExpires)) {
			return nil, nil
		}
		if s.runnerLost(rec, now) {
			// A run claimed it and stopped (a killed instance, a timed-out
			// invocation that the platform retries): the task is lost, not
			// run again from the top, whoever notices first. Or no run
			// claimed it by its claim deadline: whoever reads it fails it,
			// a runner that comes later included, so that a client told
			// the task failed never sees it run after all.
			s.failLost(ctx, rec)
			return nil, nil
		}
		rec.Runner, rec.LeaseExpires = run.runner, now.Add(s.tk.lease)
		run.message = rec.StatusMessage
		err = s.tk.store.Update(ctx, rec)
		if err == nil {
			run.setLease(rec.LeaseExpires)
			return rec, nil
		}
		if !errors.Is(err, ErrTaskConflict) {
			return nil, err
		}
	}
	return nil, nil
}

// heartbeat reads the task every poll interval until stop closes: it
// cancels the run on a cancellation or a lost claim, renews the lease and
// writes the status message.
func (s *Server) heartbeat(ctx context.Context, run *taskRun, stop <-chan struct{}) {
	t := time.NewTicker(s.tk.poll)
	defer t.Stop()
	renewed := time.Now()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var done bool
		if renewed, done = s.beat(ctx, run, renewed); done {
			return
		}
	}
}

// beat is one heartbeat, its store calls bounded by storeCall; renewed is
// when the lease was last renewed. It returns the time of the renewal it
// made (or renewed), and whether the run is over (cancelled, lost, gone).
func (s *Server) beat(ctx context.Context, run *taskRun, renewed time.Time) (time.Time, bool) {
	ctx, cancel := s.storeCall(ctx)
	defer cancel()
	rec, err := s.tk.store.Get(ctx, run.id)
	if err != nil {
		if errors.Is(err, ErrTaskNotFound) {
			run.cancel()
			return renewed, true
		}
		return renewed, false // a store hiccup: the lease covers a few
	}
	if rec.Runner != run.runner || rec.Terminal() {
		run.cancel()
		return renewed, true
	}
	if rec.CancelRequested {
		run.cancelRequested()
		return renewed, true
	}
	now := time.Now()
	msg, dirty := run.takeStatus()
	if !dirty && now.Sub(renewed) < s.tk.lease/3 {
		return renewed, false
	}
	rec.LeaseExpires = now.Add(s.tk.lease)
	stored := rec.StatusMessage
	if dirty {
		rec.StatusMessage, rec.Updated = msg, now
	}
	err = s.tk.store.Update(ctx, rec)
	if errors.Is(err, ErrTaskTooLarge) && dirty {
		// The message does not fit beside what the record holds: the
		// lease is renewed without it (the task must not be lost for a
		// progress message), and the message is dropped.
		s.log.WarnContext(ctx, "task status message dropped: the record would exceed the store's size limit", "task", logTaskID(run.id))
		rec.StatusMessage, dirty = stored, false
		err = s.tk.store.Update(ctx, rec)
	}
	switch {
	case err == nil:
		run.setLease(rec.LeaseExpires)
		if dirty {
			s.publishTask(rec)
		}
		return now, false
	case dirty:
		run.mu.Lock()
		if run.message == msg {
			run.dirty = true // written on the next beat
		}
		run.mu.Unlock()
	}
	return renewed, false
}

// runHandler runs the handler of the task's tool once and returns the
// outcome it asks for.
func (s *Server) runHandler(ctx context.Context, rec *TaskRecord, run *taskRun) (o taskOutcome) {
	defer func() {
		if p := recover(); p != nil {
			s.log.ErrorContext(ctx, "task handler panicked", "task", logTaskID(rec.ID), "tool", rec.Name, "panic", fmt.Sprint(p))
			o = taskOutcome{status: TaskFailed, err: internalf("the tool failed")}
		}
	}()
	var caps *ClientCapabilities
	if len(rec.ClientCapabilities) > 0 {
		caps = &ClientCapabilities{}
		if err := json.Unmarshal(rec.ClientCapabilities, caps); err != nil {
			caps = nil
		}
	}
	// The handler gets its own copy of the capabilities; the server
	// decides on r.caps (as Server.invoke arranges for requests).
	r := &Request{
		Method: rec.Method, ProtocolVersion: rec.ProtocolVersion,
		ClientCapabilities: cloneCaps(caps), caps: caps, ownCaps: true,
		Principal: rec.Caller, srv: s, era: taskEra, logLevel: -1, task: run,
	}
	if len(rec.ClientInfo) > 0 {
		r.ClientInfo = decodeClientInfo(rec.ClientInfo)
	}
	in := &InputResponses{state: rec.InputState, round: rec.Round}
	for wk, v := range rec.InputResponses {
		k := wk
		if hk, ok := rec.InputKeys[wk]; ok {
			k = hk
		}
		if in.raw == nil {
			in.raw = make(map[string]json.RawMessage, len(rec.InputResponses))
		}
		in.raw[k] = v
	}
	r.Input = in
	st, err := s.findTool(ctx, r, rec.Name)
	if err != nil || st == nil {
		return taskOutcome{status: TaskFailed, err: NewError(CodeInvalidParams, "Unknown tool: "+rec.Name)}
	}
	req := &CallToolRequest{Request: r, Params: CallToolParams{Name: rec.Name, Arguments: rec.Arguments}}
	res, err := st.handler(ctx, req)
	if err != nil {
		return s.taskFailure(ctx, r, rec, err)
	}
	if res == nil {
		return taskOutcome{status: TaskFailed, err: internalf("the tool returned no result")}
	}
	if e := s.checkOutput(ctx, st, res); e != nil {
		return taskOutcome{status: TaskFailed, err: e}
	}
	return s.taskResult(res)
}

// taskResult encodes a handler's result for the record, bounded by
// ServerOptions.MaxTaskResultBytes: a whole 2026-07-28 CallToolResult,
// resultType "complete" included (the schema requires it, and tasks.md
// §Task Polling inlines "the result type of the original request"),
// with the tool's own _meta and without the server's.
func (s *Server) taskResult(res *CallToolResult) taskOutcome {
	if res.Content == nil {
		c := *res
		c.Content = []Content{} // "content" is required, never null
		res = &c
	}
	j, err := json.Marshal(res)
	if err != nil || len(j) < 2 || j[0] != '{' {
		return taskOutcome{status: TaskFailed, err: internalf("the tool's result could not be encoded")}
	}
	b := append(make([]byte, 0, len(j)+24), `{"resultType":"complete"`...)
	if len(j) > 2 {
		b = append(b, ',')
	}
	b = append(b, j[1:]...)
	if len(b) > s.tk.maxResult {
		return taskOutcome{status: TaskFailed, err: NewError(CodeInternalError,
			fmt.Sprintf("The tool's result (%d bytes) exceeds the server's limit for task results (%d bytes)", len(b), s.tk.maxResult)).
			WithData(map[string]any{"reason": "task_result_too_large", "limit": s.tk.maxResult})}
	}
	return taskOutcome{status: TaskCompleted, result: b}
}

// taskFailure maps a handler's error inside a task as toolFailure does
// inside a request.
func (s *Server) taskFailure(ctx context.Context, r *Request, rec *TaskRecord, err error) taskOutcome {
	var ir *InputRequiredError
	if errors.As(err, &ir) {
		if cerr := s.checkInputRequired(ir, r.declaredCaps(), true); cerr != nil {
			var e *Error
			if !errors.As(cerr, &e) {
				e = internalf("%v", cerr)
			}
			return taskOutcome{status: TaskFailed, err: e}
		}
		if len(ir.Requests) == 0 {
			return taskOutcome{status: TaskFailed, err: internalf("the tool asked for input without any input request")}
		}
		if rec.Round+1 > s.opts.MaxInputRounds {
			return taskOutcome{status: TaskFailed, err: tooManyInputRounds(s.opts.MaxInputRounds)}
		}
		return taskOutcome{status: TaskInputRequired, ir: ir}
	}
	var te *ToolError
	if errors.As(err, &te) {
		return s.taskResult(&CallToolResult{Content: []Content{&TextContent{Text: te.Message}}, IsError: true})
	}
	if errors.Is(err, errStartTask) {
		return taskOutcome{status: TaskFailed, err: internalf("the tool returned StartTask's error inside its task")}
	}
	var e *Error
	if errors.As(err, &e) {
		return taskOutcome{status: TaskFailed, err: e}
	}
	var f serverFault
	if s.opts.ToolErrorResults && !errors.As(err, &f) {
		return s.taskResult(&CallToolResult{Content: []Content{&TextContent{Text: err.Error()}}, IsError: true})
	}
	if ctx.Err() != nil {
		return taskOutcome{status: TaskFailed, err: internalf("the tool was interrupted")}
	}
	s.log.ErrorContext(ctx, "task tool failed", "task", logTaskID(rec.ID), "tool", rec.Name, "error", errText(err))
	return taskOutcome{status: TaskFailed, err: internalf("the tool failed")}
}

// finishTask writes a run's outcome with a compare-and-set, if the run
// (runner; "" for a task no run holds) still holds the task and it is not
// terminal, and returns the status stored ("" when the task was not the
// run's to finish). A cancellation requested meanwhile wins over the
// outcome.
func (s *Server) finishTask(ctx context.Context, id, runner string, o taskOutcome) (TaskStatus, error) {
	for range maxTaskAttempts {
		rec, err := s.tk.store.Get(ctx, id)
		if err != nil {
			return "", err
		}
		if rec.Terminal() || rec.Runner != runner {
			return "", nil
		}
		now := time.Now()
		if rec.CancelRequested && o.status != TaskCancelled {
			o = taskOutcome{status: TaskCancelled}
		}
		if o.status == TaskInputRequired {
			setInputRequired(rec, o.ir, now)
		} else {
			setOutcome(rec, o, now)
		}
		err = s.tk.store.Update(ctx, rec)
		if errors.Is(err, ErrTaskTooLarge) {
			o = taskOutcome{status: TaskFailed, err: NewError(CodeInternalError, "The task's outcome exceeds the task store's size limit").
				WithData(map[string]any{"reason": "task_record_too_large"})}
			continue
		}
		if err == nil {
			s.publishTask(rec)
			return rec.Status, nil
		}
		if !errors.Is(err, ErrTaskConflict) {
			return "", err
		}
	}
	return "", ErrTaskConflict
}

// setInputRequired moves rec to input_required with the handler's
// requests. Wire keys are unique over the task's life (tasks.md §Task
// Update Requests): a key the handler asked in an earlier round gets a
// suffix naming this round.
func setInputRequired(rec *TaskRecord, ir *InputRequiredError, now time.Time) {
	rec.Round++
	used := make(map[string]bool, len(rec.UsedKeys))
	for _, k := range rec.UsedKeys {
		used[k] = true
	}
	rec.InputRequests = make(map[string]json.RawMessage, len(ir.Requests))
	rec.InputKeys = nil
	for _, k := range sortedKeys(ir.Requests) {
		wk := k
		for n := 0; used[wk]; n++ {
			wk = k + "#" + strconv.Itoa(rec.Round)
			if n > 0 {
				wk += "." + strconv.Itoa(n)
			}
		}
		used[wk] = true
		rec.UsedKeys = append(rec.UsedKeys, wk)
		if wk != k {
			if rec.InputKeys == nil {
				rec.InputKeys = map[string]string{}
			}
			rec.InputKeys[wk] = k
		}
		j, err := appendInputRequest(nil, ir.Requests[k])
		if err != nil {
			j = []byte(`{}`)
		}
		rec.InputRequests[wk] = j
	}
	rec.InputResponses, rec.InputState = nil, ir.State
	rec.Status, rec.Updated = TaskInputRequired, now
	rec.StatusMessage = "Waiting for the client's input"
	rec.Runner, rec.LeaseExpires = "", time.Time{}
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
