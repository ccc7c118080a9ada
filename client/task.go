package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/mcpfn/mcpfn/mcp"
)

// The Tasks extension (io.modelcontextprotocol/tasks, SEP-2663, the
// 2026-07-28 draft of modelcontextprotocol/ext-tasks): a server may answer a
// tools/call of a client that declares the extension with a task handle
// (resultType "task"); the client polls tasks/get, answers the task's
// inputRequests with tasks/update and may cancel it with tasks/cancel.

// Polling bounds of TaskHandle.Wait.
const (
	// DefaultTaskPollInterval is the wait between two tasks/get when the
	// server suggests none (the task's pollIntervalMs is absent).
	DefaultTaskPollInterval = time.Second
	// MinTaskPollInterval is the shortest wait between two tasks/get,
	// whatever the server suggests (a pollIntervalMs of 0 would have the
	// client poll as fast as the network allows).
	MinTaskPollInterval = 100 * time.Millisecond
	// MaxTaskPollInterval is the longest wait between two tasks/get,
	// whatever the server suggests: a huge pollIntervalMs does not leave a
	// finished task unread for days.
	MaxTaskPollInterval = 30 * time.Second
	// TaskCancelTimeout bounds the tasks/cancel CallTool sends, on a
	// context of its own, when it gives up on a task.
	TaskCancelTimeout = 5 * time.Second
)

// maxTaskInputs bounds the input requests one tasks/get may ask the
// client to answer at once (new keys, not yet answered); more is a
// protocol error. maxTaskIDBytes bounds a task id, which every task
// request carries in its body and its Mcp-Name header.
const (
	maxTaskInputs  = 64
	maxTaskIDBytes = 1024
	// maxTaskGetRetries: transport failures of tasks/get (a timeout, a
	// broken stream, an HTTP error without a JSON-RPC body) in a row that
	// Wait rides out, one poll interval apart, before it gives up.
	maxTaskGetRetries = 2
)

// ErrTaskCancelled: the task ended in the status cancelled (see
// TaskHandle.Wait).
var ErrTaskCancelled = errors.New("mcp client: task cancelled")

// TaskHandle is a task a server created for a tools/call (the Tasks
// extension; Options.Tasks declares it). It names the task by its ID and
// carries the call's credential and headers (CallOptions) to the task's
// requests; it holds no connection. Persist ID to resume after a restart:
// Conn.Task(id) returns a handle to the same task.
//
// A TaskHandle is safe for concurrent use, but Wait is meant to run once
// at a time: two Waits on one handle would answer the same input request
// once between them, each seeing only its own answers.
type TaskHandle struct {
	c  *Conn
	id string
	co *callOptions
	// first is the task as the CreateTaskResult described it (nil for a
	// handle from Conn.Task).
	first *mcp.DetailedTask

	mu sync.Mutex
	// answered are the inputRequests keys answered over the task's life
	// (keys are unique over it: SEP-2663 §Task Update Requests), so that a
	// key a later poll still lists is not presented again; rounds counts
	// the tasks/update sent.
	answered map[string]bool
	rounds   int
}

// ID is the task's identifier (taskId).
func (h *TaskHandle) ID() string { return h.id }

// Task returns a handle to the task id of this connection's server, for a
// task created earlier (TaskHandle.ID), perhaps by another process. It sends
// nothing. opts (Token, Header, TaskStatus, RawResult) apply to the task's
// requests; the task belongs to the credential that created it.
func (c *Conn) Task(id string, opts *CallOptions) *TaskHandle {
	return &TaskHandle{c: c, id: id, co: opts.resolve()}
}

// CallToolTask calls a tool like CallTool, but when the server answers with
// a task it returns the task's handle at once instead of waiting for it:
// either the result (a server may answer any call synchronously) or the
// handle is set. Without Options.Tasks no server creates a task, and
// CallToolTask is CallTool.
func (c *Conn) CallToolTask(ctx context.Context, name string, args any, opts *CallOptions) (*mcp.CallToolResult, *TaskHandle, error) {
	if c.isClosed() {
		return nil, nil, ErrClosed
	}
	r, err := toolRequest(name, args, opts.resolve())
	if err != nil {
		return nil, nil, err
	}
	res, err := c.do(ctx, &r)
	if err != nil {
		return nil, nil, err
	}
	if c.isTask(res) {
		h, err := c.createdTask(res, r.co)
		return nil, h, err
	}
	tr, err := decodeCallToolResult(res)
	return tr, nil, err
}

// isTask reports whether the tools/call result res is a CreateTaskResult
// (resultType "task"). Only a modern Conn of a client that declared the
// extension looks (legacy results have no resultType).
func (c *Conn) isTask(res json.RawMessage) bool {
	if !c.opts.Tasks || !c.era.tasks() {
		return false
	}
	rt, err := resultTypeOf(res)
	return err == nil && rt == resultTask
}

// createdTask returns the handle of the task the CreateTaskResult res
// describes, and tells CallOptions.TaskStatus of it.
func (c *Conn) createdTask(res json.RawMessage, co *callOptions) (*TaskHandle, error) {
	t, err := decodeTask(res, "")
	if err != nil {
		return nil, err
	}
	h := &TaskHandle{c: c, id: t.TaskID, co: co, first: t}
	if fn := co.taskStatusFn(); fn != nil {
		fn(t)
	}
	return h, nil
}

// waitTool waits for the task of a tools/call (CallTool, CallToolOnce) and
// stores its result where CallOptions.RawResult asked. When the wait fails with
// the task still running (ctx ended, the server broke the protocol, too
// many input rounds), the task is cancelled: its result would never be
// read.
func (c *Conn) waitTool(ctx context.Context, res json.RawMessage, co *callOptions) (*mcp.CallToolResult, error) {
	h, err := c.createdTask(res, co)
	if err != nil {
		return nil, err
	}
	tr, ended, err := h.wait(ctx)
	if err != nil && !ended {
		h.cancelDetached(ctx)
	}
	return tr, err
}

// cancelDetached sends tasks/cancel best effort, on a context that
// outlives ctx (which may have ended) by at most TaskCancelTimeout.
func (h *TaskHandle) cancelDetached(ctx context.Context) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), TaskCancelTimeout)
	defer cancel()
	if err := h.Cancel(cctx); err != nil {
		h.c.cl.log.Warn("mcp client: tasks/cancel failed", "task", h.id, "err", err)
	}
}

// Get sends one tasks/get and returns the task as the server describes it
// now: its status, statusMessage, pollIntervalMs, and the outstanding
// inputRequests (input_required), the result (completed) or the error
// (failed). A task the server does not know (or no longer: it may purge
// expired tasks) is a -32602 *mcp.Error.
func (h *TaskHandle) Get(ctx context.Context) (*mcp.DetailedTask, error) {
	t, _, err := h.get(ctx)
	return t, err
}

// get is Get, with the keys of the task's inputRequests in the server's
// order.
func (h *TaskHandle) get(ctx context.Context) (*mcp.DetailedTask, []string, error) {
	res, err := h.send(ctx, mcp.MethodTasksGet, nil)
	if err != nil {
		return nil, nil, err
	}
	t, err := decodeTask(res, h.id)
	if err != nil {
		return nil, nil, err
	}
	var keys []string
	if t.Status == mcp.TaskInputRequired {
		ir, err := parseInputRequired(res)
		if err != nil || !ir.hasReqs {
			return nil, nil, protocolError("tasks/get: input_required task %s without inputRequests", h.id)
		}
		keys = ir.keys
		t.InputRequests = ir.requests
	}
	return t, keys, nil
}

// Update sends one tasks/update with responses, a result per inputRequests
// key (mcp.ElicitResult, mcp.CreateMessageResult or mcp.ListRootsResult
// JSON), and remembers the keys as answered, so that Wait does not answer
// them again. The server acknowledges before the task reflects the answers
// (SEP-2663 §Task Update Requests: eventually consistent), and ignores keys
// that are not outstanding.
func (h *TaskHandle) Update(ctx context.Context, responses map[string]json.RawMessage) error {
	keys := make([]string, 0, len(responses))
	b := []byte{'{'}
	for k, v := range responses {
		if len(keys) > 0 {
			b = append(b, ',')
		}
		keys = append(keys, k)
		b = append(append(appendJSONString(b, k), ':'), v...)
	}
	return h.update(ctx, append(b, '}'), keys)
}

// update sends the inputResponses object b, answering keys.
func (h *TaskHandle) update(ctx context.Context, b json.RawMessage, keys []string) error {
	if _, err := h.send(ctx, mcp.MethodTasksUpdate, b); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rounds++
	if h.answered == nil {
		h.answered = map[string]bool{}
	}
	for _, k := range keys {
		h.answered[k] = true
	}
	return nil
}

// Cancel sends tasks/cancel. The server acknowledges; cancellation is
// cooperative and eventually consistent, and the task may still end
// completed or failed (SEP-2663 §Task Cancellation).
func (h *TaskHandle) Cancel(ctx context.Context) error {
	_, err := h.send(ctx, mcp.MethodTasksCancel, nil)
	return err
}

// send sends the task request method (inputResponses: tasks/update's) with
// the handle's credential and headers, and Mcp-Name set to the task id
// (SEP-2663 §Streamable HTTP: Routing Headers). It is never cached.
func (h *TaskHandle) send(ctx context.Context, method string, inputResponses json.RawMessage) (json.RawMessage, error) {
	if h.id == "" || len(h.id) > maxTaskIDBytes {
		return nil, fmt.Errorf("mcp client: %s: task id of %d bytes (1 to %d)", method, len(h.id), maxTaskIDBytes)
	}
	if !h.c.era.tasks() {
		return nil, fmt.Errorf("mcp client: %s: tasks need a 2026-07-28 connection", method)
	}
	p := params{{"taskId", quoteJSON(h.id)}}
	if inputResponses != nil {
		p = append(p, field{"inputResponses", inputResponses})
	}
	return h.c.do(ctx, &request{method: method, params: p, co: h.co.credentialOnly(CacheBypass),
		header: http.Header{"Mcp-Name": {mcp.EncodeHeaderValue(h.id)}}})
}

// Wait polls the task with tasks/get until it ends and returns its
// outcome: completed → its CallToolResult (IsError set for a tool's own
// failure; CallOptions.RawResult given to the call that created the task, or to
// Conn.Task, receives it as sent), failed → the task's JSON-RPC error as
// an *mcp.Error, cancelled → an error matching ErrTaskCancelled with the
// statusMessage.
//
// The first poll comes the task's pollIntervalMs after its creation (at
// once for a handle from Conn.Task). Between polls Wait waits the latest
// pollIntervalMs (DefaultTaskPollInterval when absent), at least
// MinTaskPollInterval and at most MaxTaskPollInterval; when ctx's deadline
// comes sooner, it polls once more shortly before it. Each input_required
// poll's inputRequests are answered with the Client's handlers
// (Options.Elicitation, Sampling, Roots), as a multi round-trip request's
// are, and sent in one tasks/update; a key answered before (by Wait or
// Update) is not presented again however many polls still list it. At most
// Options.MaxRounds tasks/update are sent over the handle's life (the next
// is a *MaxRoundsError), and one poll may ask for at most 64 new inputs (a
// protocol error). Each request has the Client's RequestTimeout and
// MaxResponseBytes; up to two tasks/get in a row that fail in transport (a
// timeout, a broken stream, an HTTP error without a JSON-RPC body) are
// retried a poll interval later.
//
// When ctx ends Wait returns its error and leaves the task running: Cancel
// cancels it, and a handle from Conn.Task resumes waiting (CallTool, which
// owns its task, cancels it). CallOptions.TaskStatus is told of each
// change of status or statusMessage. Wait is meant to run once at a time
// per task.
func (h *TaskHandle) Wait(ctx context.Context) (*mcp.CallToolResult, error) {
	tr, _, err := h.wait(ctx)
	return tr, err
}

// wait is Wait; ended reports that the task reached a terminal status (its
// outcome is the result or error).
func (h *TaskHandle) wait(ctx context.Context) (_ *mcp.CallToolResult, ended bool, _ error) {
	fn := h.co.taskStatusFn()
	last := h.first
	var interval time.Duration
	if last != nil && !last.Status.Terminal() {
		interval = pollInterval(last)
	}
	failures := 0
	for {
		if err := sleepCtx(ctx, interval); err != nil {
			return nil, false, err
		}
		t, keys, err := h.get(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, false, ctx.Err()
			}
			if transient(err) && failures < maxTaskGetRetries {
				failures++
				continue
			}
			return nil, false, err
		}
		failures = 0
		if fn != nil && (last == nil || last.Status != t.Status || last.StatusMessage != t.StatusMessage) {
			fn(t)
		}
		last = t
		interval = pollInterval(t)
		switch t.Status {
		case mcp.TaskCompleted:
			tr, err := decodeCallToolResult(t.Result)
			if err != nil {
				return nil, true, err
			}
			h.co.keepRaw(t.Result)
			return tr, true, nil
		case mcp.TaskFailed:
			return nil, true, t.Error.WithResponse("tools/call", http.StatusOK)
		case mcp.TaskCancelled:
			if t.StatusMessage != "" {
				return nil, true, fmt.Errorf("%w: task %s: %s", ErrTaskCancelled, h.id, t.StatusMessage)
			}
			return nil, true, fmt.Errorf("%w: task %s", ErrTaskCancelled, h.id)
		case mcp.TaskInputRequired:
			if err := h.answer(ctx, t, keys); err != nil {
				return nil, false, err
			}
		}
	}
}

// answer answers the inputRequests of t (keys, in the server's order) not
// answered before, and sends them in one tasks/update.
func (h *TaskHandle) answer(ctx context.Context, t *mcp.DetailedTask, keys []string) error {
	h.mu.Lock()
	var fresh []string
	for _, k := range keys {
		if !h.answered[k] {
			fresh = append(fresh, k)
		}
	}
	rounds := h.rounds
	h.mu.Unlock()
	if len(fresh) == 0 {
		return nil // answered; the server has not caught up yet
	}
	if len(fresh) > maxTaskInputs {
		return protocolError("task %s asks for %d inputs at once (at most %d)", h.id, len(fresh), maxTaskInputs)
	}
	if rounds >= h.c.opts.MaxRounds {
		return &MaxRoundsError{Method: mcp.MethodTasksUpdate, Rounds: rounds}
	}
	b, err := h.c.answerAll(ctx, fresh, t.InputRequests)
	if err != nil {
		return err
	}
	return h.update(ctx, b, fresh)
}

// decodeTask decodes a CreateTaskResult (want "") or the tasks/get result
// of the task want, and checks what the handle relies on: a task id of at
// most maxTaskIDBytes (the one asked for), a known status, a result object
// when completed and an error when failed (SEP-2663 §Task Polling).
func decodeTask(res json.RawMessage, want string) (*mcp.DetailedTask, error) {
	var t mcp.DetailedTask
	if err := json.Unmarshal(res, &t); err != nil {
		return nil, protocolError("task: %v", err)
	}
	switch {
	case t.TaskID == "" || len(t.TaskID) > maxTaskIDBytes:
		return nil, protocolError("task id of %d bytes (1 to %d)", len(t.TaskID), maxTaskIDBytes)
	case want != "" && t.TaskID != want:
		return nil, protocolError("tasks/get of task %q answered for task %q", want, t.TaskID)
	}
	switch t.Status {
	case mcp.TaskWorking, mcp.TaskInputRequired, mcp.TaskCancelled:
	case mcp.TaskCompleted:
		if want != "" && (len(t.Result) == 0 || t.Result[0] != '{') {
			return nil, protocolError("completed task %s without a result object", t.TaskID)
		}
	case mcp.TaskFailed:
		if want != "" && t.Error == nil {
			return nil, protocolError("failed task %s without an error", t.TaskID)
		}
	default:
		return nil, protocolError("task %s has unknown status %q", t.TaskID, t.Status)
	}
	return &t, nil
}

// pollInterval is the wait before the next tasks/get after observing t:
// its pollIntervalMs within [MinTaskPollInterval, MaxTaskPollInterval],
// DefaultTaskPollInterval when absent.
func pollInterval(t *mcp.DetailedTask) time.Duration {
	if t == nil || t.PollIntervalMs == nil {
		return DefaultTaskPollInterval
	}
	ms := *t.PollIntervalMs
	switch {
	case ms <= int64(MinTaskPollInterval/time.Millisecond):
		return MinTaskPollInterval
	case ms >= int64(MaxTaskPollInterval/time.Millisecond):
		return MaxTaskPollInterval
	}
	return time.Duration(ms) * time.Millisecond
}

// sleepCtx waits d, or less when ctx's deadline comes first: then it
// returns shortly before the deadline (a tenth of the time left early, at
// least MinTaskPollInterval after now), so that the task is looked at once
// more; with MinTaskPollInterval or less left it waits for ctx to end. It
// returns ctx's error when ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); left < d {
			if left <= MinTaskPollInterval {
				<-ctx.Done() // too close to the deadline for another look
				return ctx.Err()
			}
			d = max(left-left/10, MinTaskPollInterval)
		}
	}
	if d <= 0 {
		return nil
	}
	return sleep(ctx, d)
}

// transient reports whether a failed tasks/get may succeed when sent
// again: a timeout, a broken stream, a transport error, or an HTTP 5xx or
// 429 without a JSON-RPC body. JSON-RPC errors and protocol violations are
// the server's answer.
func transient(err error) bool {
	var he *HTTPError
	var ue *url.Error
	switch {
	case errors.Is(err, ErrTimeout), errors.Is(err, ErrStreamBroken):
		return true
	case errors.As(err, &he):
		return he.StatusCode >= 500 || he.StatusCode == http.StatusTooManyRequests
	case errors.As(err, &ue):
		return true
	}
	return false
}
