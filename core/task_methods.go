package core

// The methods of the Tasks extension (io.modelcontextprotocol/tasks,
// 2026-07-28): tasks/get, tasks/update (the input a task waits for) and
// tasks/cancel, each looking the task up for its caller.

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

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
	return s.retryTask(ctx, r, id, func(rec *TaskRecord) ([]byte, error) {
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
		}
		return nil, s.taskUpdateError(ctx, err)
	})
}

// retryTask loads the caller's task id and calls attempt with it, which
// changes the record and writes it with the store's compare-and-set.
// While attempt fails with ErrTaskConflict (the record changed since it
// was read), the task is loaded again and attempt called again, at most
// maxTaskAttempts times.
func (s *Server) retryTask(ctx context.Context, r *Request, id string, attempt func(rec *TaskRecord) ([]byte, error)) ([]byte, error) {
	rec, err := s.loadTask(ctx, r, id)
	if err != nil {
		return nil, err
	}
	for range maxTaskAttempts {
		out, err := attempt(rec)
		if !errors.Is(err, ErrTaskConflict) {
			return out, err
		}
		if rec, err = s.loadTask(ctx, r, id); err != nil {
			return nil, err
		}
	}
	return nil, internalf("the task kept changing; retry")
}

// taskUpdateError is the answer when the store refuses a task's Update
// with err: an unknown task; ErrTaskConflict itself, for retryTask to try
// again; or a store failure.
func (s *Server) taskUpdateError(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, ErrTaskNotFound):
		return errTaskNotFound()
	case errors.Is(err, ErrTaskConflict):
		return err
	}
	return s.taskStoreFailure(ctx, "update", err)
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
	return s.retryTask(ctx, r, id, func(rec *TaskRecord) ([]byte, error) {
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
		if err := s.tk.store.Update(ctx, rec); err != nil {
			return nil, s.taskUpdateError(ctx, err)
		}
		if held {
			s.signalCancel(id)
		} else {
			s.publishTask(rec)
		}
		return s.ackTask(r), nil
	})
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
