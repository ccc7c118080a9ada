// Package storetest holds the tests every core.SessionStore (Run) and
// every core.TaskStore (RunTasks) must pass, in the spirit of
// testing/slogtest: a store package calls them from its own tests.
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) core.SessionStore { return &memory.Store{} })
//	}
//
// The suite uses real time (sessions that expired a minute ago, others that
// expire in an hour), so stores need no clock hook. Stores must keep times to
// at least millisecond precision. newStore is called once
// per subtest and must return an empty store.
package storetest
