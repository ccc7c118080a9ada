// Package otel holds the end-to-end tests of the otel module that need
// more than it links: examples/otel exporting over OTLP/HTTP to a receiver
// that decodes the real OTLP protobuf, and a server instrumented by the
// otel module called by go-sdk's client. It is a module of its own so that
// the OTLP protobuf and go-sdk stay out of the test module's graph.
package otel
