package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
)

// TestReplayCacheReAdded: a key and jti added again once its first entry
// expired is remembered for its own window, even when the ring slot of the
// first entry is reused meanwhile.
func TestReplayCacheReAdded(t *testing.T) {
	c := newReplayCache(3)
	now := time.Now()
	if !c.add("jkt", "a", now.Add(time.Second), now) { // slot 0
		t.Fatal("first proof refused")
	}
	later := now.Add(2 * time.Second)                      // the first entry expired
	if !c.add("jkt", "a", later.Add(time.Minute), later) { // slot 1
		t.Fatal("the same jti after its expiry refused")
	}
	c.add("jkt", "b", later.Add(time.Minute), later) // slot 2
	c.add("jkt", "c", later.Add(time.Minute), later) // slot 0 again
	if c.add("jkt", "a", later.Add(time.Minute), later) {
		t.Fatal("a proof within its window was accepted again: reusing the slot of its expired predecessor forgot it")
	}
}

// TestReplayCacheBound: a flood of distinct proofs never grows the cache
// beyond its bound; a proof within the bound is still refused as a replay.
func TestReplayCacheBound(t *testing.T) {
	c := newReplayCache(100)
	now := time.Now()
	exp := now.Add(time.Minute)
	for i := range 10000 {
		if !c.add("jkt", fmt.Sprint(i), exp, now) {
			t.Fatalf("proof %d refused as a replay", i)
		}
		if c.len() > 100 {
			t.Fatalf("%d entries after %d proofs, bound 100", c.len(), i+1)
		}
	}
	if c.add("jkt", "9999", exp, now) || c.add("jkt", "9900", exp, now) {
		t.Fatal("a remembered proof was accepted again")
	}
	// The oldest were forgotten to keep the bound (what DPoPOptions says).
	if !c.add("jkt", "0", exp, now) {
		t.Fatal("an evicted proof is still remembered")
	}
	// The same jti under another key is another proof.
	if !c.add("other", "9999", exp, now) {
		t.Fatal("jti of another key refused")
	}
	// An expired entry does not count.
	if !c.add("jkt", "9998", exp, exp.Add(time.Second)) {
		t.Fatal("an expired entry refused a proof")
	}
}

func TestNormalURL(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		{"https://MCP.example.com/mcp", "https://mcp.example.com/mcp"},
		{"HTTPS://mcp.example.com:443/mcp", "https://mcp.example.com/mcp"},
		{"http://127.0.0.1:80", "http://127.0.0.1/"},
		{"https://mcp.example.com/mcp?x=1#f", "https://mcp.example.com/mcp"},
		{"http://[::1]:8080/mcp", "http://[::1]:8080/mcp"},
	} {
		a, ok1 := normalURL(c.a)
		b, ok2 := normalURL(c.b)
		if !ok1 || !ok2 || a != b {
			t.Errorf("%q (%q) and %q (%q) differ", c.a, a, c.b, b)
		}
	}
	for _, c := range []struct{ a, b string }{
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp/"},
		{"https://mcp.example.com/mcp", "http://mcp.example.com/mcp"},
		{"https://mcp.example.com:8443/mcp", "https://mcp.example.com/mcp"},
		{"https://mcp.example.com/MCP", "https://mcp.example.com/mcp"},
	} {
		a, _ := normalURL(c.a)
		b, _ := normalURL(c.b)
		if a == b {
			t.Errorf("%q and %q are the same", c.a, c.b)
		}
	}
	for _, bad := range []string{"", "/mcp", "mailto:x@y", "https://user@mcp.example.com/mcp", "%"} {
		if _, ok := normalURL(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

// testProof is a valid proof for fuzz seeds.
func testProof(tb testing.TB, edit func(h jws.Headers, c map[string]any)) string {
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pub, _ := jwk.FromRaw(k.Public())
	h := jws.NewHeaders()
	h.Set(jws.TypeKey, "dpop+jwt")
	h.Set(jws.JWKKey, pub)
	c := map[string]any{"jti": "j", "htm": "POST", "htu": "https://mcp.example.com/mcp", "iat": time.Now().Unix(), "ath": "x"}
	if edit != nil {
		edit(h, c)
	}
	b, _ := json.Marshal(c)
	p, err := jws.Sign(b, jws.WithKey(jwa.ES256, k, jws.WithProtectedHeaders(h)))
	if err != nil {
		tb.Fatal(err)
	}
	return string(p)
}

// FuzzDPoPProof: parseDPoPProof never panics and accepts only what its
// checks allow: a bounded compact JWS of typ dpop+jwt with jti, htm, htu
// and iat, and a thumbprint.
func FuzzDPoPProof(f *testing.F) {
	f.Add(testProof(f, nil))
	f.Add(testProof(f, func(h jws.Headers, _ map[string]any) { h.Set(jws.TypeKey, "JWT") }))
	f.Add(testProof(f, func(_ jws.Headers, c map[string]any) { c["iat"] = 1.5 }))
	f.Add(testProof(f, func(_ jws.Headers, c map[string]any) { delete(c, "jti") }))
	f.Add("a.b.c")
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	f.Add(strings.Repeat("A", 100))
	algs := map[string]bool{}
	for _, a := range DefaultDPoPAlgorithms {
		algs[a] = true
	}
	f.Fuzz(func(t *testing.T, proof string) {
		p, err := parseDPoPProof(proof, algs)
		if err != nil {
			if p != nil {
				t.Fatal("a proof with an error")
			}
			return
		}
		if len(proof) > MaxDPoPProofBytes || strings.Count(proof, ".") != 2 {
			t.Fatalf("accepted a proof of %d bytes, %d dots", len(proof), strings.Count(proof, "."))
		}
		if p.jkt == "" || p.jti == "" || p.htm == "" || p.htu == "" {
			t.Fatalf("accepted %+v", p)
		}
	})
}

// BenchmarkDPoPReplayCache reports the memory the replay cache takes per
// remembered proof when full (the DefaultDPoPReplayCacheSize estimate).
func BenchmarkDPoPReplayCache(b *testing.B) {
	const n = DefaultDPoPReplayCacheSize
	now := time.Now()
	var before, after runtime.MemStats
	for range b.N {
		runtime.GC()
		runtime.ReadMemStats(&before)
		c := newReplayCache(n)
		for i := range 2 * n {
			c.add("jkt", fmt.Sprint(i), now.Add(time.Minute), now)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/entry")
		runtime.KeepAlive(c)
	}
}

// BenchmarkDPoPCheck is the cost of checking one proof (parse, signature,
// claims, replay cache).
func BenchmarkDPoPCheck(b *testing.B) {
	d, _ := newDPoPConfig(&DPoPOptions{})
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pub, _ := jwk.FromRaw(k.Public())
	proofs := make([]string, b.N)
	for i := range proofs {
		h := jws.NewHeaders()
		h.Set(jws.TypeKey, "dpop+jwt")
		h.Set(jws.JWKKey, pub)
		c, _ := json.Marshal(map[string]any{"jti": fmt.Sprint(i), "htm": "POST", "htu": "https://mcp.example.com/mcp", "iat": time.Now().Unix()})
		p, _ := jws.Sign(c, jws.WithKey(jwa.ES256, k, jws.WithProtectedHeaders(h)))
		proofs[i] = string(p)
	}
	b.ResetTimer()
	for i := range b.N {
		p, err := parseDPoPProof(proofs[i], d.algs)
		if err != nil {
			b.Fatal(err)
		}
		d.replay.add(p.jkt, p.jti, p.iat.Add(time.Minute), time.Now())
	}
}
