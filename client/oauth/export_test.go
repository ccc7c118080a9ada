package oauth

import (
	"context"
	"net"
	"net/netip"
)

// SetNetwork makes the remote flows of s resolve names with resolve and
// connect with dial (tests: names of a fake public internet mapped to
// loopback servers). Call it before the first challenge.
func SetNetwork(s *Source, resolve func(ctx context.Context, host string) ([]netip.Addr, error), dial func(ctx context.Context, network, addr string) (net.Conn, error)) {
	s.hooks = &netHooks{resolve: resolve, dial: dial}
}

// HostClass exposes hostClass to the tests.
func HostClass(host string) string { return hostClass(host) }

// LocalClass exposes localClass to the tests.
func LocalClass(a netip.Addr) string { return localClass(a) }
