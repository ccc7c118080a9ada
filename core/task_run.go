package core

// Running a task: a runner claims it with a lease, renews the lease while
// the handler runs, and records the outcome, bounded in time against a
// failing store.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"strconv"
	"sync"
	"time"
)

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
	if !s.serving.Load() {
		s.serving.Store(true)
	}
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
