// Package taskwire decodes the results of the Tasks extension (tasks.md) as
// the test module's tests read them off the wire: plain strings and
// numbers, so that a test states what it expects without the mcp package's
// types.
package taskwire

// Task holds the fields of CreateTaskResult and GetTaskResult (a
// DetailedTask) that the tests read.
type Task struct {
	ResultType     string `json:"resultType"`
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	StatusMessage  string `json:"statusMessage"`
	PollIntervalMs int    `json:"pollIntervalMs"`
	InputRequests  map[string]struct {
		Method string `json:"method"`
	} `json:"inputRequests"`
	Result *struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Text returns the text of the first content block of the task's result,
// "" when it has none.
func (t *Task) Text() string {
	if t.Result == nil || len(t.Result.Content) == 0 {
		return ""
	}
	return t.Result.Content[0].Text
}
