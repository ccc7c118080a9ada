// Package storetest is the conformance suite of core.SessionStore
// implementations; see Run.
package storetest
