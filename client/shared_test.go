package client_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/mcp"
)

// What the Conns of one Client share, and what they do not.

// TestClientSharesCache: the Conns of a Client share its cache, keyed by
// endpoint: a Conn opened after another closed is served its fresh
// private entry (same credential source), another Client or another
// endpoint is not, and a call with its own credential still bypasses it.
func TestClientSharesCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := principals(t)
	opts := &client.Options{Mode: client.ModeModern, TokenSource: client.StaticToken("alice")}
	cl := client.New(opts)
	a, err := cl.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(a.ListTools(ctx, nil)); got != "alice_tool" || rec.count("tools/list") != 1 {
		t.Fatalf("first Conn: %q, tools/list %d", got, rec.count("tools/list"))
	}
	a.Close()
	b := connectWith(t, ctx, cl, url)
	if got := toolNames(b.ListTools(ctx, nil)); got != "alice_tool" || rec.count("tools/list") != 1 {
		t.Fatalf("second Conn of the Client: %q, tools/list %d (want 1: the Client's cache)", got, rec.count("tools/list"))
	}
	// A call with its own credential neither reads nor stores entries.
	if got := toolNames(b.ListTools(ctx, &client.CallOptions{Token: "bob"})); got != "bob_tool" || rec.count("tools/list") != 2 {
		t.Fatalf("per-call credential: %q, tools/list %d", got, rec.count("tools/list"))
	}
	if got := toolNames(b.ListTools(ctx, nil)); got != "alice_tool" || rec.count("tools/list") != 2 {
		t.Fatalf("after the per-call credential: %q, tools/list %d", got, rec.count("tools/list"))
	}
	// Another Client has a cache of its own.
	o := connectWith(t, ctx, client.New(opts), url)
	if got := toolNames(o.ListTools(ctx, nil)); got != "alice_tool" || rec.count("tools/list") != 3 {
		t.Fatalf("another Client: %q, tools/list %d (want 3)", got, rec.count("tools/list"))
	}
	// Another endpoint of the Client has entries of its own.
	url2, rec2 := principals(t)
	e := connectWith(t, ctx, cl, url2)
	if got := toolNames(e.ListTools(ctx, nil)); got != "alice_tool" || rec2.count("tools/list") != 1 {
		t.Fatalf("another endpoint: %q, tools/list %d there (want 1)", got, rec2.count("tools/list"))
	}
}

// TestClientChallengeDropsPrivate: the token source is the Client's, so a
// successful challenge on one Conn (a new authorization) drops the private
// entries every Conn of the Client would be served.
func TestClientChallengeDropsPrivate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := principals(t)
	src := &challenger{tok: "alice", good: "bob", fix: true}
	cl := client.New(&client.Options{Mode: client.ModeModern, TokenSource: src})
	a := connectWith(t, ctx, cl, url)
	b := connectWith(t, ctx, cl, url)
	challengeDropsPrivate(t, ctx, rec, a, b)
}

// TestClientConcurrentConns: one Client, many goroutines each connecting
// (probing concurrently: the era memory and the cache are shared), calling
// and closing, in both eras (run with -race).
func TestClientConcurrentConns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, mode := range []core.Mode{core.ModeAuto, core.ModeLegacy} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			url, rec := newServer(t, &core.ServerOptions{Mode: mode, CacheHints: map[string]core.CacheHint{
				"tools/list": {TTL: time.Minute, Scope: core.CacheScopePrivate}}}, nil)
			cl := client.New(&client.Options{TokenSource: client.StaticToken("t"), NoGETStream: true})
			var wg sync.WaitGroup
			errs := make(chan error, 64)
			for i := range 8 {
				wg.Go(func() {
					c, err := cl.Connect(ctx, url)
					if err != nil {
						errs <- err
						return
					}
					defer c.Close()
					if c.Modern() != (mode == core.ModeAuto) {
						errs <- fmt.Errorf("Conn %d: modern %v", i, c.Modern())
					}
					for range 3 {
						if _, err := c.ListTools(ctx, nil); err != nil {
							errs <- err
						}
						r, err := c.CallTool(ctx, "echo", map[string]any{"s": "x"}, nil)
						if err != nil {
							errs <- err
						} else if mcptest.Text(r) != "echo:x" {
							errs <- fmt.Errorf("wrong result %+v", r)
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			// Every Connect after the first probe may skip it; at most the
			// eight that raced the first one probe.
			if n := rec.count("server/discover"); n < 1 || n > 8 {
				t.Errorf("server/discover %d times", n)
			}
			c, err := cl.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			n := rec.count("server/discover")
			c.Close()
			c, err = cl.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
			if rec.count("server/discover") != n {
				t.Error("a Connect after the era was known probed again")
			}
		})
	}
}

// TestClientBadOptions: Options New cannot use make every Connect,
// InitializeLegacy, Discover and Adopt fail before anything is sent.
func TestClientBadOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, nil, nil)
	for _, o := range []*client.Options{
		{SessionID: "bad\nid"},
		{SessionID: "s", SessionVersion: mcp.ProtocolVersion20260728},
		{SessionID: "s", Mode: client.ModeModern},
	} {
		cl := client.New(o)
		if _, err := cl.Connect(ctx, url); err == nil {
			t.Errorf("Connect with %+v succeeded", o)
		}
		if _, err := cl.InitializeLegacy(ctx, url); err == nil {
			t.Errorf("InitializeLegacy with %+v succeeded", o)
		}
		if _, err := cl.Discover(ctx, url); err == nil {
			t.Errorf("Discover with %+v succeeded", o)
		}
		if _, err := cl.Adopt(&client.Discovery{URL: url, DiscoverResult: mcp.DiscoverResult{SupportedVersions: []string{mcp.ProtocolVersion20260728}}}); err == nil {
			t.Errorf("Adopt with %+v succeeded", o)
		}
	}
	if n := len(rec.all()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
	// A bad URL fails the same way.
	if _, err := client.New(nil).Connect(ctx, "ftp://example.com/mcp"); err == nil {
		t.Fatal("Connect to an ftp URL succeeded")
	}
}
