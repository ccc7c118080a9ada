package core

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
	"github.com/mcpfn/mcpfn/mcp"
)

// maxWatchedTasks bounds the task ids one subscriptions/listen stream
// watches; the acknowledgement lists those it agreed to. It also bounds
// the ids of a listen request that are looked at: the first
// maxWatchedTasks distinct valid ones.
const maxWatchedTasks = 32

// taskPollTimeout bounds one poll round of the watched tasks: a store that
// does not answer holds the poller that long at most, then the next tick
// starts over.
const taskPollTimeout = 10 * time.Second

// Task status notifications (tasks.md §Task Status Notifications: a server
// MAY push notifications/tasks on a subscriptions/listen stream that names
// the tasks in taskIds) come from the store, so that streams on any
// instance see changes made on any other. The streams of one process share
// one taskPoller: each watched task is read once per
// ServerOptions.TaskPollInterval however many streams watch it, plus once
// after each change this process makes to it (publishTask), and what
// moved is fanned out to the streams that watch it. Ten streams watching
// the same 32 tasks cost 32 reads per interval, not 320.

// taskPoller reads the tasks this process's listen streams watch. Its loop
// runs only while a stream watches a live task: the last one to go stops
// it. It never holds mu while it reads the store or encodes a task.
type taskPoller struct {
	mu      sync.Mutex
	watched map[string]*watchedTask // task id -> who watches it
	run     *pollRun                // the running loop, nil when none
}

// watchedTask is a task some listen stream of this process watches.
type watchedTask struct {
	principal string    // its owner's key, read by the first watcher
	updated   time.Time // the newest lastUpdatedAt read
	watchers  map[*taskWatch]struct{}
	dirty     bool // changed by this process since the last read
}

// pollRun is one run of the poll loop.
type pollRun struct {
	cancel context.CancelFunc
	kick   chan struct{} // read the dirty tasks now
}

// taskWatch is one listen stream's watched tasks. last and pending are
// guarded by taskPoller.mu.
type taskWatch struct {
	wake chan struct{} // a notification is pending
	// last is the lastUpdatedAt the stream sent, or saw when it began, per
	// live task it watches.
	last map[string]time.Time
	// pending are the notifications not yet sent, at most one per task.
	pending []taskNote
}

// taskNote is a pending notifications/tasks: the members of the task's
// DetailedTask, each followed by a comma. One read's body is shared by
// every stream it goes to, and never changed.
type taskNote struct {
	id   string
	body []byte
}

// push queues a notification for w and wakes its stream; a newer one
// replaces a pending one of the same task. Callers hold taskPoller.mu.
func (w *taskWatch) push(n taskNote) {
	if i := slices.IndexFunc(w.pending, func(p taskNote) bool { return p.id == n.id }); i >= 0 {
		w.pending[i] = n
	} else {
		w.pending = append(w.pending, n)
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// publishTask tells the poller that this process changed the task: the
// streams watching it hear of it after one read, without waiting for the
// next tick.
func (s *Server) publishTask(rec *TaskRecord) {
	p := &s.hub.tasks
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.watched[rec.ID]
	if e == nil || p.run == nil {
		return
	}
	e.dirty = true
	select {
	case p.run.kick <- struct{}{}:
	default:
	}
}

// watchTasks picks the tasks a listen request's taskIds name that the
// stream watches: the caller's own, among the first maxWatchedTasks
// distinct valid ids (so a request costs at most that many store reads,
// none for a task another stream of this process already watches). A
// task that already ended is reported once, at once. It returns nil when
// none is kept; the caller checked that the request declares the
// extension.
func (s *Server) watchTasks(ctx context.Context, r *Request, ids []string) (*taskWatch, []string) {
	if len(ids) == 0 || !taskOwner(r.Principal) {
		return nil, nil // a caller that cannot own tasks watches none
	}
	cand := make([]string, 0, min(len(ids), maxWatchedTasks))
	for _, id := range ids {
		if len(cand) == maxWatchedTasks {
			break
		}
		if validTaskID(id) && !slices.Contains(cand, id) {
			cand = append(cand, id)
		}
	}
	owner := r.Principal.key()
	p := &s.hub.tasks
	known := p.known(cand)
	w := &taskWatch{wake: make(chan struct{}, 1), last: make(map[string]time.Time, len(cand))}
	var kept []string
	var ended []taskNote
	for _, id := range cand {
		if k, ok := known[id]; ok {
			if k.principal == owner {
				w.last[id] = k.updated
				kept = append(kept, id)
			}
			continue
		}
		rec, err := s.tk.store.Get(ctx, id)
		if err != nil || rec.Principal != owner {
			continue
		}
		if !rec.Terminal() {
			w.last[id] = rec.Updated
		} else if body, err := s.appendTask(nil, rec, true); err == nil {
			ended = append(ended, taskNote{id: id, body: body})
		} else {
			continue
		}
		kept = append(kept, id)
	}
	if len(kept) == 0 {
		return nil, nil
	}
	sort.Strings(kept)
	s.watch(w, owner, ended)
	return w, kept
}

// known returns the owner and newest lastUpdatedAt of those of ids the
// poller watches already.
func (p *taskPoller) known(ids []string) map[string]watchedTask {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out map[string]watchedTask
	for _, id := range ids {
		if e := p.watched[id]; e != nil {
			if out == nil {
				out = map[string]watchedTask{}
			}
			out[id] = watchedTask{principal: e.principal, updated: e.updated}
		}
	}
	return out
}

// watch adds w's live tasks (owned by owner) to the poller, starting its
// loop if it was idle, and queues the notifications of tasks that had
// ended.
func (s *Server) watch(w *taskWatch, owner string, ended []taskNote) {
	p := &s.hub.tasks
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, last := range w.last {
		e := p.watched[id]
		if e == nil {
			if p.watched == nil {
				p.watched = map[string]*watchedTask{}
			}
			e = &watchedTask{principal: owner, updated: last, watchers: map[*taskWatch]struct{}{}}
			p.watched[id] = e
		}
		e.watchers[w] = struct{}{}
	}
	for _, n := range ended {
		w.push(n)
	}
	if p.run == nil && len(p.watched) > 0 {
		ctx, cancel := context.WithCancel(context.Background())
		p.run = &pollRun{cancel: cancel, kick: make(chan struct{}, 1)}
		go s.pollTasks(ctx, p.run)
	}
}

// unwatchTasks removes a stream's watch; the poller stops when nothing is
// left to watch. nil does nothing.
func (s *Server) unwatchTasks(w *taskWatch) {
	if w == nil {
		return
	}
	p := &s.hub.tasks
	p.mu.Lock()
	defer p.mu.Unlock()
	for id := range w.last {
		p.drop(id, w)
	}
	w.last, w.pending = nil, nil
	p.stopIdle()
}

// drop removes w from the watchers of id, and id from the poller when it
// was the last. Callers hold p.mu.
func (p *taskPoller) drop(id string, w *taskWatch) {
	if e := p.watched[id]; e != nil {
		delete(e.watchers, w)
		if len(e.watchers) == 0 {
			delete(p.watched, id)
		}
	}
}

// stopIdle stops the poll loop when nothing is watched. Callers hold p.mu.
func (p *taskPoller) stopIdle() {
	if len(p.watched) == 0 && p.run != nil {
		p.run.cancel()
		p.run = nil
	}
}

// pollTasks is the poll loop of run: every poll interval it reads every
// watched task, and when kicked the tasks this process changed. A read
// that fails is skipped (the stream stays open; the next tick reads
// again); a task that is gone (expired) is watched no more.
func (s *Server) pollTasks(ctx context.Context, run *pollRun) {
	p := &s.hub.tasks
	t := time.NewTicker(s.tk.poll)
	defer t.Stop()
	for {
		all := false
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			all = true
		case <-run.kick:
		}
		ids, ok := p.due(run, all)
		if !ok {
			return
		}
		if len(ids) == 0 {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, taskPollTimeout)
		var failed int
		var firstErr error
		for _, id := range ids {
			if ctx.Err() != nil {
				break // nothing is watched any more
			}
			rec, err := s.tk.store.Get(rctx, id)
			switch {
			case errorsIsNotFound(err):
				p.gone(id)
			case err != nil:
				if failed++; firstErr == nil {
					firstErr = err
				}
			default:
				s.offerTask(ctx, rec)
			}
		}
		cancel()
		if failed > 0 && ctx.Err() == nil {
			s.log.WarnContext(ctx, "task notifications: reading watched tasks failed; retrying at the next poll",
				"failed", failed, "of", len(ids), "error", firstErr.Error())
		}
	}
}

// due returns the ids to read: all watched ones, or those this process
// changed; false when run is no longer the poller's loop.
func (p *taskPoller) due(run *pollRun, all bool) ([]string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run != run {
		return nil, false
	}
	ids := make([]string, 0, len(p.watched))
	for id, e := range p.watched {
		if all || e.dirty {
			ids = append(ids, id)
			e.dirty = false
		}
	}
	return ids, true
}

// gone forgets a task the store no longer has (it expired).
func (p *taskPoller) gone(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.watched[id]; e != nil {
		for w := range e.watchers {
			delete(w.last, id)
		}
		delete(p.watched, id)
	}
	p.stopIdle()
}

// offerTask hands a task just read to the streams watching it: each whose
// last sent lastUpdatedAt is older gets a notification; an ended task is
// then watched no more. The task is encoded once, outside the lock, and
// only when some stream needs it.
func (s *Server) offerTask(ctx context.Context, rec *TaskRecord) {
	p := &s.hub.tasks
	if p.offer(rec, nil) {
		return
	}
	body, err := s.appendTask(nil, rec, true)
	if err != nil {
		s.log.WarnContext(ctx, "task notifications: encoding a task failed", "task", logTaskID(rec.ID), "error", err.Error())
		return
	}
	p.offer(rec, body)
}

// offer fans rec out (see offerTask) and reports true, or, when body is
// nil and a stream needs the notification, changes nothing and reports
// false.
func (p *taskPoller) offer(rec *TaskRecord, body []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.watched[rec.ID]
	if e == nil {
		return true
	}
	if body == nil {
		for w := range e.watchers {
			if rec.Updated.After(w.last[rec.ID]) {
				return false
			}
		}
	}
	if rec.Updated.After(e.updated) {
		e.updated = rec.Updated
	}
	ended := rec.Terminal()
	for w := range e.watchers {
		if rec.Updated.After(w.last[rec.ID]) {
			w.last[rec.ID] = rec.Updated
			w.push(taskNote{id: rec.ID, body: body})
		}
		if ended {
			delete(w.last, rec.ID)
		}
	}
	if ended {
		delete(p.watched, rec.ID)
		p.stopIdle()
	}
	return true
}

// taskMessages returns the notifications/tasks pending for w, tagged with
// the stream's subscription id (idMeta).
func (s *Server) taskMessages(w *taskWatch, idMeta []byte) [][]byte {
	p := &s.hub.tasks
	p.mu.Lock()
	notes := w.pending
	w.pending = nil
	p.mu.Unlock()
	out := make([][]byte, 0, len(notes))
	for _, n := range notes {
		b := make([]byte, 0, len(`{"_meta":,`)+len(idMeta)+len(n.body))
		b = append(append(append(append(b, `{"_meta":`...), idMeta...), ','), n.body...)
		b[len(b)-1] = '}'
		out = append(out, jsonwire.AppendNotification(nil, mcp.NotificationTasksStatus, b))
	}
	return out
}
