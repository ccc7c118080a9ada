// Package floods attacks examples/everything, run as a process of its own
// exactly as a user runs it, the way a hostile client on the open internet
// would, and asserts that the cost to the server stays bounded and that
// other callers keep being served: a flood of task calls with large
// arguments (the process's resident memory and the refusals), and one
// principal starting long tasks by the dozen (another principal's task
// still runs). The bounds are asserted in bytes and counts, never in wall
// time. The outage of the task store is tested through the replicas
// cluster (test/replicas, TestTaskSurvivesStoreOutage), the streams in
// test/replicas too.
//
// Linux only: resident memory is read from /proc.
package floods
