package core

// What a deployment needs to know about a server's tasks (Tasks extension,
// ext-tasks specification/draft/tasks.md), asked at start by the
// serverless adapters and the deploy kits: tasks.md §Task Creation makes a
// task readable through any instance as soon as its CreateTaskResult is
// sent, and a platform that runs many instances, or freezes an instance
// once its response is sent, breaks that with the per-process defaults.
// See docs/deploying.md, "Safe defaults on many instances".

// ServesTasks reports whether a tool registered now may run as a task
// (ToolOptions.TaskSupport TaskOptional or TaskRequired): what server/discover
// advertises as the Tasks extension. It follows the registry, so ask it
// once the tools are added.
func (s *Server) ServesTasks() bool { return s.servesTasks(s.reg.Load()) }

// PerProcessTasks reports whether the server keeps its tasks in this
// process's memory, because ServerOptions.TaskStore was nil. Such a task is
// found only through this process: a tasks/get, tasks/update or tasks/cancel
// that reaches another instance answers -32602 (unknown task), and the task
// is lost with the process. A TaskStore set in the options is taken as
// shared (store/memory's TaskStore is not: do not set it on many
// instances).
func (s *Server) PerProcessTasks() bool { return s.opts.TaskStore == nil }

// InProcessTaskRunner reports whether tasks run on this process's
// in-process runner (goroutines detached from the request), because
// ServerOptions.TaskRunner was nil. That needs a process that keeps
// running after its response is sent: on AWS Lambda, which freezes the
// sandbox then, tasks need the runner of adapters/lambda/taskrunner.
func (s *Server) InProcessTaskRunner() bool { return s.opts.TaskRunner == nil }
