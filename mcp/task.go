package mcp

import (
	"encoding/json"
)

// The Tasks extension (io.modelcontextprotocol/tasks, SEP-2663, ext-tasks
// specification/draft/tasks.md) lets a server answer a 2026-07-28
// tools/call with a durable task handle instead of its result; the client
// polls tasks/get, answers the task's input requests with tasks/update and
// may tasks/cancel. A client declares the extension in the per-request
// client capabilities (ClientCapabilities.Extensions[ExtensionTasks]) of
// every request it wants the extension on; a server advertises it in its
// server/discover capabilities (ServerCapabilities.Extensions).

// ExtensionTasks is the identifier of the Tasks extension, its key in
// ClientCapabilities.Extensions and ServerCapabilities.Extensions (tasks.md
// §Extension Identifier). An empty object declares support.
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// The methods and the notification of the Tasks extension (tasks.md
// §Task Polling, §Task Update Requests, §Task Cancellation, §Task Status
// Notifications). Over Streamable HTTP a request to one of the three
// methods carries the header Mcp-Name with its params.taskId (tasks.md
// §Streamable HTTP: Routing Headers).
const (
	MethodTasksGet          = "tasks/get"
	MethodTasksUpdate       = "tasks/update"
	MethodTasksCancel       = "tasks/cancel"
	NotificationTasksStatus = "notifications/tasks"
)

// The resultType discriminator of a 2026-07-28 result (basic/patterns/mrtr
// and tasks.md §Polymorphic Results): "complete" for a standard result
// (tasks/get, tasks/update and tasks/cancel results included),
// "input_required" for an InputRequiredResult, "task" for a
// CreateTaskResult and for nothing else.
const (
	ResultTypeComplete      = "complete"
	ResultTypeInputRequired = "input_required"
	ResultTypeTask          = "task"
)

// TaskStatus is the status of a task (tasks.md §Task Status). A task starts
// working, may move between working and input_required, and ends in one of
// the terminal statuses completed, failed or cancelled, which it never
// leaves.
type TaskStatus string

// Task statuses.
const (
	// TaskWorking: the request is being processed.
	TaskWorking TaskStatus = "working"
	// TaskInputRequired: the server needs the client's answers to the
	// task's InputRequests (sent with tasks/update).
	TaskInputRequired TaskStatus = "input_required"
	// TaskCompleted: the request completed with a result, a tool result
	// with isError true included.
	TaskCompleted TaskStatus = "completed"
	// TaskFailed: the request failed with a JSON-RPC error, and only then.
	TaskFailed TaskStatus = "failed"
	// TaskCancelled: the request was cancelled before it completed.
	TaskCancelled TaskStatus = "cancelled"
)

// Terminal reports whether s is completed, failed or cancelled.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// TaskSupport is how a tool serves task-augmented calls, a registration
// setting of the server (core.ToolOptions.TaskSupport): the 2026-07-28
// extension has no tool-level wire field, the server alone decides per
// request (tasks.md §Capability Negotiation). The values are those of the
// 2025-11-25 execution.taskSupport vocabulary.
type TaskSupport string

// Task support levels.
const (
	// TaskForbidden (also the empty value): the tool never runs as a task.
	TaskForbidden TaskSupport = "forbidden"
	// TaskOptional: the tool runs as a task for a request that declares
	// the extension, and synchronously for one that does not.
	TaskOptional TaskSupport = "optional"
	// TaskRequired: the tool runs only as a task; a request that does not
	// declare the extension is answered -32021 with
	// data.requiredCapabilities.extensions[ExtensionTasks].
	TaskRequired TaskSupport = "required"
)

// Task is the state of a task as every task message carries it (tasks.md
// §Tasks). CreatedAt and LastUpdatedAt are RFC 3339 (ISO 8601) timestamps.
// TTLMs is the time to live from creation in milliseconds, nil for
// unlimited (sent as null). PollIntervalMs is the suggested polling
// interval in milliseconds, nil when none is suggested.
type Task struct {
	TaskID         string     `json:"taskId"`
	Status         TaskStatus `json:"status"`
	StatusMessage  string     `json:"statusMessage,omitempty"`
	CreatedAt      string     `json:"createdAt"`
	LastUpdatedAt  string     `json:"lastUpdatedAt"`
	TTLMs          *int64     `json:"ttlMs"`
	PollIntervalMs *int64     `json:"pollIntervalMs,omitempty"`
}

// DetailedTask is a Task with the payload of its status inlined, the
// result of tasks/get and the params of notifications/tasks (tasks.md
// §Tasks, DetailedTask): InputRequests when input_required (the requests
// still unanswered), Result (the original request's result, for tools/call
// a CallToolResult, as raw JSON) when completed, Error when failed.
type DetailedTask struct {
	Task
	InputRequests InputRequests   `json:"inputRequests,omitempty"`
	Result        json.RawMessage `json:"result,omitempty"`
	Error         *Error          `json:"error,omitempty"`
}

// CreateTaskResult is the result a server returns in lieu of a tools/call
// result when it runs the call as a task (tasks.md §Task Creation): the
// flat Result & Task, with ResultType "task". It never carries
// requestState, inputRequests, result or error.
type CreateTaskResult struct {
	ResultType string `json:"resultType"`
	Task
	Meta Meta `json:"_meta,omitempty"`
}

// GetTaskResult is the result of tasks/get: the DetailedTask of the task
// now, with ResultType "complete" (tasks.md §Task Polling).
type GetTaskResult struct {
	ResultType string `json:"resultType"`
	DetailedTask
	Meta Meta `json:"_meta,omitempty"`
}

// TaskParams are the params of tasks/get and tasks/cancel.
type TaskParams struct {
	TaskID string `json:"taskId"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// UpdateTaskParams are the params of tasks/update: answers to the task's
// outstanding input requests, under their keys (basic/patterns/mrtr
// InputResponses). The server ignores answers to keys that are not
// outstanding (never asked, answered already) and keeps the task
// input_required until every outstanding key is answered (tasks.md §Task
// Update Requests).
type UpdateTaskParams struct {
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	Meta           Meta                       `json:"_meta,omitempty"`
}

// TaskAck is the empty acknowledgement that answers tasks/update and
// tasks/cancel, with ResultType "complete" (tasks.md §Task Update
// Requests, §Task Cancellation). Both are eventually consistent: the task's
// status shows their effect on a later tasks/get.
type TaskAck struct {
	ResultType string `json:"resultType"`
	Meta       Meta   `json:"_meta,omitempty"`
}
