package core

import (
	"context"
	"testing"
)

// BenchmarkSeal seals a request state (HMAC-SHA256 over the binding digest
// and the payload).
func BenchmarkSeal(b *testing.B) {
	s := fuzzSealer()
	ctx := context.Background()
	keys := []string{"user_name"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := s.seal(ctx, "round1", keys, 0, fuzzBinding); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify verifies a sealed request state for its call.
func BenchmarkVerify(b *testing.B) {
	s := fuzzSealer()
	ctx := context.Background()
	tok, err := s.seal(ctx, "round1", []string{"user_name"}, 0, fuzzBinding)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.open(ctx, tok, fuzzBinding); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseMessage decodes a tools/call envelope.
func BenchmarkParseMessage(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":40,"b":2},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, err := parseMessage(body); err != nil {
			b.Fatal(err)
		}
	}
}
