// Package jsonwire holds the JSON building blocks of core's request path and
// of package mcp's encoders, none of which knows MCP: a case-sensitive scanner that finds an object's
// members without allocating, the limits and duplicate-key checks applied
// to client-supplied arguments, the canonical form the sealed state binds,
// and hand-written encoders for JSON strings and JSON-RPC envelopes that
// write exactly what encoding/json would.
//
// The scanner functions assume valid JSON (core checks the whole body once
// with Valid) and only ever return sub-slices of their input.
package jsonwire
