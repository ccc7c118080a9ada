package lambda

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpfn/mcpfn/core"
)

// taskEventKey is the one top-level key of a task event. No event that an
// AWS integration builds has it: their top-level keys are fixed by AWS, and
// what a caller sends (headers, path, query, body) is nested inside them.
const taskEventKey = "mcpfnTask"

// maxTaskEventLen bounds the payload of a task event, whose encoding by
// TaskEvent is at most 160 bytes; whitespace aside, nothing longer is one.
const maxTaskEventLen = 1024

// MaxTaskIDLen is the longest task id a task event may carry, in bytes.
const MaxTaskIDLen = 128

// A task event is the payload of an asynchronous invocation that runs a
// task:
//
//	{"mcpfnTask":{"taskId":"<id>"}}
//
// It names the task and nothing else: the request, the principal and every
// other input of the task are in the task store, where the invocation that
// created the task wrote them.

// TaskEvent returns the payload of the asynchronous invocation with which a
// function runs the task taskID (see "Tasks" in the package documentation):
// {"mcpfnTask":{"taskId":"<taskID>"}}. It is what a task runner sends with
// the Lambda Invoke API (InvocationType Event). It returns an error if
// taskID is empty, longer than [MaxTaskIDLen] bytes or not printable ASCII
// without spaces, which [Wrap] would refuse.
func TaskEvent(taskID string) ([]byte, error) {
	if err := checkTaskID(taskID); err != nil {
		return nil, err
	}
	return json.Marshal(map[string]map[string]string{taskEventKey: {"taskId": taskID}})
}

func checkTaskID(id string) error {
	if id == "" || len(id) > MaxTaskIDLen {
		return fmt.Errorf("lambda: task id of %d bytes (1 to %d)", len(id), MaxTaskIDLen)
	}
	for i := range len(id) {
		if c := id[i]; c <= ' ' || c > '~' {
			return fmt.Errorf("lambda: task id with byte %#x (printable ASCII without spaces only)", c)
		}
	}
	return nil
}

// parseTaskEvent decodes a payload routed as a task event. It accepts
// exactly the task event's shape, with keys compared exactly (encoding/json
// matches struct fields without regard to case): any other key, at the top
// or in the task object, makes it malformed, so that an event of another
// source that happened to carry the key is not taken for a task event.
func parseTaskEvent(payload []byte) (string, error) {
	if len(payload) > maxTaskEventLen {
		return "", fmt.Errorf("lambda: malformed task event: %d bytes (at most %d)", len(payload), maxTaskEventLen)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(payload, &top); err != nil || len(top) != 1 || top[taskEventKey] == nil {
		return "", errors.New("lambda: malformed task event: want exactly {\"mcpfnTask\":{\"taskId\":\"<id>\"}}")
	}
	var task map[string]json.RawMessage
	if err := json.Unmarshal(top[taskEventKey], &task); err != nil || len(task) != 1 || task["taskId"] == nil {
		return "", errors.New("lambda: malformed task event: want exactly {\"mcpfnTask\":{\"taskId\":\"<id>\"}}")
	}
	var id string
	if err := json.Unmarshal(task["taskId"], &id); err != nil {
		return "", errors.New("lambda: malformed task event: taskId is not a string")
	}
	if err := checkTaskID(id); err != nil {
		return "", err
	}
	return id, nil
}

// taskDeadlineMargin is how much of the invocation's time a task leaves
// unused, at most, so that its outcome is recorded before Lambda ends the
// invocation; a quarter of the time left when the task starts, if that is
// less.
const taskDeadlineMargin = 2 * time.Second

// taskContext returns the context a task runs in: the invocation's, ending
// taskDeadlineMargin (or a quarter of the time left) before the
// invocation's deadline.
func taskContext(ctx context.Context, now time.Time) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	left := dl.Sub(now)
	return context.WithDeadline(ctx, dl.Add(-min(taskDeadlineMargin, left/4)))
}

// taskExecutor runs a task named by a task event; *core.Server is one.
type taskExecutor interface {
	RunTask(ctx context.Context, taskID string) error
}

// TaskAnswer is what the function answers a task event with. Lambda
// discards the answers of asynchronous invocations; a synchronous
// invocation of a task event (the Invoke API's RequestResponse) sees it.
type TaskAnswer struct {
	// TaskID is the task the event named; empty when the event was
	// malformed.
	TaskID string `json:"taskId,omitempty"`
	// Error says why the event was refused or the task not run: the
	// event was malformed, the handler does not run tasks, or the store
	// holds no such task. Empty when the task was handed to the server,
	// which runs it only if it is still to run and no other run holds it.
	Error string `json:"error,omitempty"`
}

// task handles a task event: it hands the task to the server, which runs it
// only if it exists, is runnable and no other invocation holds it.
func (a *adapter) task(ctx context.Context, payload []byte) (any, error) {
	id, err := parseTaskEvent(payload)
	if err != nil {
		a.opts.Logger.WarnContext(ctx, "lambda: refused a task event", "err", err)
		return TaskAnswer{Error: err.Error()}, nil
	}
	if a.tasks == nil {
		a.opts.Logger.WarnContext(ctx, "lambda: a task event reached a handler that is not a *core.Server", "task", logTaskID(id))
		return TaskAnswer{TaskID: id, Error: "lambda: the handler does not run tasks"}, nil
	}
	tctx, cancel := taskContext(ctx, time.Now())
	defer cancel()
	switch err := a.tasks.RunTask(tctx, id); {
	case errors.Is(err, core.ErrTaskNotFound):
		// Unknown or expired: nothing to run, and a retry would not find
		// it either.
		a.opts.Logger.WarnContext(ctx, "lambda: a task event names no stored task", "task", logTaskID(id))
		return TaskAnswer{TaskID: id, Error: "lambda: no such task"}, nil
	case err != nil:
		return nil, err
	}
	return TaskAnswer{TaskID: id}, nil
}

// logTaskID is the part of a task id that logs show, as core's logs do:
// task ids are unguessable handles, and a log reader must not be able to
// use one.
func logTaskID(id string) string {
	if len(id) > 8 {
		return id[:8] + "…"
	}
	return id
}
