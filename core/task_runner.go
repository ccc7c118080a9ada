package core

import (
	"context"
	"errors"
	"sync"
	"time"
)

// TaskRunner decides where the work of a task runs. When a task is created,
// and again when tasks/update has answered all of its input requests, the
// instance that handled the request calls Start; the runner arranges for
// some instance of the deployment (this one or another) to call
// Server.RunTask with the id, now or soon. Start must return only once the
// run is handed off durably enough to happen (an in-process runner: the
// goroutine is scheduled; a Lambda runner: the asynchronous Invoke was
// accepted), since the request's instance may be frozen right after its
// response. A run that starts later than ServerOptions.TaskClaimTimeout
// after Start finds the task failed ("no runner took it"). An error from
// Start fails the task: ErrTaskRunnerBusy is answered as a bound the
// caller reached (CodeLimitExceeded), any other error as -32603.
//
// A runner may call RunTask more than once for one start (a retried
// asynchronous invocation): RunTask claims the task with a lease, so that
// at most one run holds it at a time, and returns nil without running the
// handler when the task is not runnable.
//
// Implementations must be safe for concurrent use. ServerOptions.TaskRunner
// nil means the server's in-process runner: a bounded pool of goroutines
// (ServerOptions.TaskWorkers) shared fairly between callers
// (ServerOptions.TaskWorkersPerPrincipal), with contexts detached from the
// creating request, cancelled when the task is cancelled or the server
// closes.
type TaskRunner interface {
	Start(ctx context.Context, taskID string) error
}

// ErrTaskRunnerBusy is a runner's Start error when it cannot take the task:
// the in-process runner's workers are busy and its queue is full.
var ErrTaskRunnerBusy = errors.New("core: all task workers are busy")

// DefaultTaskWorkers is the size of the in-process runner's pool when
// ServerOptions.TaskWorkers is zero.
const DefaultTaskWorkers = 64

// taskQueuePerWorker sizes the in-process runner's queue: tasks waiting
// for a worker, all callers together, at most this many per worker.
const taskQueuePerWorker = 16

// inProcessRunner is the default TaskRunner: a pool of goroutines that
// call Server.RunTask with a context detached from the request that
// started the task and cancelled when the server closes.
//
// The pool is shared fairly: one principal (all anonymous callers count as
// one) runs at most share tasks at once; its further tasks wait in its own
// queue, and a freed worker takes the next task of the next principal in
// turn (round robin over the principals that wait), so a caller that
// starts many long tasks delays its own, never another's. A queued task
// waits until its claim deadline (TaskClaimTimeout); past it, it is
// dropped from the queue and fails as unclaimed when next read. The
// queues together hold at most maxQueue tasks; a start beyond is
// ErrTaskRunnerBusy.
type inProcessRunner struct {
	s        *Server
	workers  int
	share    int
	maxQueue int
	base     context.Context
	stop     context.CancelFunc

	mu         sync.Mutex // guards what follows, and wg.Add against close
	closed     bool
	running    int
	held       int // reservations not yet started, counted as queued
	queued     int
	principals map[string]*runnerPrincipal
	turn       []*runnerPrincipal // principals with queued tasks, in turn
	next       int                // index in turn of the next to serve
	wg         sync.WaitGroup
}

// runnerPrincipal is one principal's runs and queue.
type runnerPrincipal struct {
	key     string
	running int
	queue   []queuedTask
}

type queuedTask struct {
	id       string
	deadline time.Time
}

// errRunnerClosed is Start's error once the server is closed.
var errRunnerClosed = errors.New("core: the server is closed: no new tasks run")

func newInProcessRunner(s *Server, workers, share int) *inProcessRunner {
	ctx, cancel := context.WithCancel(context.Background())
	return &inProcessRunner{s: s, workers: workers, share: min(share, workers), maxQueue: workers * taskQueuePerWorker,
		base: ctx, stop: cancel, principals: map[string]*runnerPrincipal{}}
}

// Start implements TaskRunner for callers outside core: the task runs for
// the principal in ctx.
func (p *inProcessRunner) Start(ctx context.Context, taskID string) error {
	t, err := p.reserve(PrincipalFromContext(ctx).key())
	if err != nil {
		return err
	}
	return t.start(taskID, time.Now().Add(p.s.tk.claim))
}

// runTicket is a place reserved in the runner for a task about to be
// created: creating a task the runner would refuse leaves a record that
// counts against the caller's bounds for its TTL, so the place is taken
// first.
type runTicket struct {
	p         *inProcessRunner
	principal string
	done      bool
}

// reserve takes a place for a task of principal: a worker now, or a
// place in the queue. ErrTaskRunnerBusy when neither is free.
func (p *inProcessRunner) reserve(principal string) (*runTicket, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errRunnerClosed
	}
	if !p.canRun(p.principals[principal]) && p.queued+p.held >= p.maxQueue {
		return nil, ErrTaskRunnerBusy
	}
	p.held++
	return &runTicket{p: p, principal: principal}, nil
}

// release gives the place back if start did not use it.
func (t *runTicket) release() {
	if t == nil || t.done {
		return
	}
	t.done = true
	t.p.mu.Lock()
	t.p.held--
	t.p.mu.Unlock()
}

// start runs task id in the reserved place: at once when a worker and the
// principal's share allow, else queued until deadline.
func (t *runTicket) start(id string, deadline time.Time) error {
	p := t.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if !t.done {
		t.done = true
		p.held--
	}
	if p.closed {
		return errRunnerClosed
	}
	rp := p.principals[t.principal]
	if rp == nil {
		rp = &runnerPrincipal{key: t.principal}
		p.principals[t.principal] = rp
	}
	if p.canRun(rp) && len(rp.queue) == 0 {
		p.launch(rp, id)
		return nil
	}
	if len(rp.queue) == 0 {
		p.turn = append(p.turn, rp)
	}
	rp.queue = append(rp.queue, queuedTask{id: id, deadline: deadline})
	p.queued++
	return nil
}

// start reserves and starts at once.
func (p *inProcessRunner) start(principal, id string, deadline time.Time) error {
	t, err := p.reserve(principal)
	if err != nil {
		return err
	}
	return t.start(id, deadline)
}

// canRun reports whether a task of rp (nil: a principal with nothing
// running) may take a worker now. Callers hold p.mu.
func (p *inProcessRunner) canRun(rp *runnerPrincipal) bool {
	return p.running < p.workers && (rp == nil || rp.running < p.share)
}

// launch runs task id of rp on a new worker. Callers hold p.mu.
func (p *inProcessRunner) launch(rp *runnerPrincipal, id string) {
	p.running++
	rp.running++
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		if err := p.s.RunTask(p.base, id); err != nil && !errors.Is(err, context.Canceled) {
			p.s.log.Warn("task run failed", "task", logTaskID(id), "error", err.Error())
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		p.running--
		rp.running--
		p.dispatch(time.Now())
		p.forget(rp)
	}()
}

// dispatch starts queued tasks while workers are free, taking the
// principals that wait in turn and skipping those at their share; a
// queued task past its claim deadline is dropped (its record says it was
// never claimed: the next reader fails it). Callers hold p.mu.
func (p *inProcessRunner) dispatch(now time.Time) {
	for p.running < p.workers && len(p.turn) > 0 && !p.closed {
		served := false
		for i := 0; i < len(p.turn) && !served; i++ {
			k := (p.next + i) % len(p.turn)
			rp := p.turn[k]
			if rp.running >= p.share {
				continue
			}
			q := rp.queue[0]
			rp.queue[0] = queuedTask{}
			rp.queue = rp.queue[1:]
			p.queued--
			if len(rp.queue) == 0 {
				p.turn = append(p.turn[:k], p.turn[k+1:]...)
				p.next = k
			} else {
				p.next = k + 1
			}
			if len(p.turn) > 0 {
				p.next %= len(p.turn)
			} else {
				p.next = 0
			}
			served = true
			if !q.deadline.IsZero() && now.After(q.deadline) {
				p.forget(rp)
				continue
			}
			p.launch(rp, q.id)
		}
		if !served {
			return // every principal that waits is at its share
		}
	}
}

// forget drops rp once it has nothing running or queued. Callers hold
// p.mu.
func (p *inProcessRunner) forget(rp *runnerPrincipal) {
	if rp.running == 0 && len(rp.queue) == 0 && p.principals[rp.key] == rp {
		delete(p.principals, rp.key)
	}
}

// close stops the pool: no new runs; queued tasks fail at once (no worker
// of this process will take them); the runs in flight get grace to
// finish, then their contexts are cancelled (their tasks end failed, or
// cancelled when that was requested), and close waits for them.
func (p *inProcessRunner) close(grace time.Duration) {
	p.mu.Lock()
	p.closed = true
	var queued []string
	for _, rp := range p.turn {
		for _, q := range rp.queue {
			queued = append(queued, q.id)
		}
		rp.queue = nil
	}
	p.turn, p.queued = nil, 0
	p.mu.Unlock()
	for _, id := range queued {
		p.s.finishTask(context.Background(), id, "", taskOutcome{status: TaskFailed,
			err: internalf("the server stopped before the task started")})
	}
	if grace > 0 {
		done := make(chan struct{})
		go func() { p.wg.Wait(); close(done) }()
		t := time.NewTimer(grace)
		select {
		case <-done:
		case <-t.C:
		}
		t.Stop()
	}
	p.stop()
	p.wg.Wait()
}
