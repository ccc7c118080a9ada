// Package memstore is the one in-memory session store of mcpfn. core uses it
// as the default SessionStore (ServerOptions.SessionStore nil) and package
// store/memory exports it, so the store the project's store suite
// (store/storetest) checks is the store a server gets by default.
//
// It cannot import core (core imports it), so it has its own Record and
// Limits types, declared field for field like core.SessionRecord and
// core.SessionLimits: a pointer to one converts to a pointer to the other at
// no cost, and a change to either fails to compile until both agree.
package memstore
