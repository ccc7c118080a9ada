package core

import (
	"context"
	"sort"
	"time"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
	"github.com/mcpfn/mcpfn/mcp"
)

// maxWatchedTasks bounds the task ids one subscriptions/listen stream
// watches; the acknowledgement lists those it agreed to.
const maxWatchedTasks = 32

// taskWatch is one listen stream's watched tasks (tasks.md §Task Status
// Notifications). Each tick of the poll interval, and at once when this
// process changes one of them, it reads them from the store and sends
// notifications/tasks for those whose lastUpdatedAt moved: streams on any
// instance see changes made on any other.
type taskWatch struct {
	ids  map[string]time.Time // id -> Updated last sent (or seen at start)
	wake chan struct{}
}

// publishTask wakes this process's listen streams that watch the task.
func (s *Server) publishTask(rec *TaskRecord) {
	s.tk.mu.Lock()
	defer s.tk.mu.Unlock()
	for w := range s.tk.watchers {
		if _, ok := w.ids[rec.ID]; ok {
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
	}
}

// watchTasks checks a listen request's taskIds: only a request declaring
// the extension may ask for them (-32021 otherwise); the ids kept are the
// caller's own live tasks, at most maxWatchedTasks. It returns nil when
// none is kept.
func (s *Server) watchTasks(ctx context.Context, r *Request, ids []string) (*taskWatch, []string, error) {
	if len(ids) == 0 {
		return nil, nil, nil
	}
	if !r.declaresTasks() {
		return nil, nil, missingTasks()
	}
	w := &taskWatch{ids: map[string]time.Time{}, wake: make(chan struct{}, 1)}
	var kept []string
	for _, id := range ids {
		if len(kept) == maxWatchedTasks {
			break
		}
		if _, dup := w.ids[id]; dup || !validTaskID(id) {
			continue
		}
		rec, err := s.tk.store.Get(ctx, id)
		if err != nil || rec.Principal != r.Principal.key() {
			continue
		}
		w.ids[id] = rec.Updated
		if rec.Terminal() {
			w.ids[id] = time.Time{} // sent once, at the first tick
		}
		kept = append(kept, id)
	}
	if len(kept) == 0 {
		return nil, nil, nil
	}
	sort.Strings(kept)
	s.tk.mu.Lock()
	if s.tk.watchers == nil {
		s.tk.watchers = map[*taskWatch]struct{}{}
	}
	s.tk.watchers[w] = struct{}{}
	s.tk.mu.Unlock()
	return w, kept, nil
}

func (s *Server) unwatchTasks(w *taskWatch) {
	if w == nil {
		return
	}
	s.tk.mu.Lock()
	delete(s.tk.watchers, w)
	s.tk.mu.Unlock()
}

// taskMessages reads the watched tasks and returns notifications/tasks
// for those that changed; a task that ended (or expired) is watched no
// more.
func (s *Server) taskMessages(ctx context.Context, w *taskWatch, idMeta []byte) [][]byte {
	var out [][]byte
	for id, last := range w.ids {
		rec, err := s.tk.store.Get(ctx, id)
		if err != nil {
			if errorsIsNotFound(err) {
				delete(w.ids, id)
			}
			continue
		}
		if !last.IsZero() && !rec.Updated.After(last) {
			continue
		}
		w.ids[id] = rec.Updated
		b := append(append(append(make([]byte, 0, 256), `{"_meta":`...), idMeta...), ',')
		b, err = s.appendTask(b, rec, true)
		if err != nil {
			continue
		}
		b[len(b)-1] = '}'
		out = append(out, jsonwire.AppendNotification(nil, mcp.NotificationTasksStatus, b))
		if rec.Terminal() {
			delete(w.ids, id)
		}
	}
	return out
}
