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
// response. An error from Start fails the task (-32603).
//
// A runner may call RunTask more than once for one start (a retried
// asynchronous invocation): RunTask claims the task with a lease, so that
// at most one run holds it at a time, and returns nil without running the
// handler when the task is not runnable.
//
// Implementations must be safe for concurrent use. ServerOptions.TaskRunner
// nil means the server's in-process runner: a bounded pool of goroutines
// (ServerOptions.TaskWorkers) with contexts detached from the creating
// request, cancelled when the task is cancelled or the server closes.
type TaskRunner interface {
	Start(ctx context.Context, taskID string) error
}

// ErrTaskRunnerBusy is the in-process runner's Start error when all of its
// workers are busy (ServerOptions.TaskWorkers): the task fails at once
// rather than queueing without bound.
var ErrTaskRunnerBusy = errors.New("core: all task workers are busy")

// DefaultTaskWorkers is the size of the in-process runner's pool when
// ServerOptions.TaskWorkers is zero.
const DefaultTaskWorkers = 64

// inProcessRunner is the default TaskRunner: a bounded pool of goroutines
// that call Server.RunTask with a context detached from the request that
// started the task and cancelled when the server closes.
type inProcessRunner struct {
	s    *Server
	sem  chan struct{}
	base context.Context
	stop context.CancelFunc

	mu     sync.Mutex // guards closed and wg.Add against close
	closed bool
	wg     sync.WaitGroup
}

// errRunnerClosed is Start's error once the server is closed.
var errRunnerClosed = errors.New("core: the server is closed: no new tasks run")

func newInProcessRunner(s *Server, workers int) *inProcessRunner {
	ctx, cancel := context.WithCancel(context.Background())
	return &inProcessRunner{s: s, sem: make(chan struct{}, workers), base: ctx, stop: cancel}
}

// Start runs the task on a worker of the pool, or returns ErrTaskRunnerBusy
// when every worker is busy.
func (p *inProcessRunner) Start(_ context.Context, taskID string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errRunnerClosed
	}
	select {
	case p.sem <- struct{}{}:
	default:
		return ErrTaskRunnerBusy
	}
	p.wg.Add(1)
	go func() {
		defer func() { <-p.sem; p.wg.Done() }()
		if err := p.s.RunTask(p.base, taskID); err != nil && !errors.Is(err, context.Canceled) {
			p.s.log.Warn("task run failed", "task", logTaskID(taskID), "error", err.Error())
		}
	}()
	return nil
}

// close cancels the runs in flight and waits for them to end.
// close stops the pool: no new runs; the runs in flight get grace to
// finish, then their contexts are cancelled (their tasks end failed, or
// cancelled when that was requested), and close waits for them.
func (p *inProcessRunner) close(grace time.Duration) {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
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
