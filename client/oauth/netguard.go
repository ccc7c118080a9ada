package oauth

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Where a flow may go. The MCP endpoint decides: a flow for a loopback
// endpoint (localhost, 127.0.0.0/8, ::1) is local and may reach any address,
// plain http to loopback hosts included; a flow for any other endpoint is
// remote: every URL it fetches or posts to must be https and must neither
// name nor resolve (at connect time) to a loopback, private, link-local,
// unspecified or otherwise non-public address, so that a remote MCP server
// or authorization server cannot make the client call local admin APIs or
// cloud metadata endpoints. Config.AllowPrivateNetwork makes every flow
// local.

// localClass names the class of address a that a remote flow may not
// reach, or returns "" for a public unicast address. IPv4-mapped,
// IPv4-compatible and NAT64 (64:ff9b::/96) IPv6 addresses are classified by
// the IPv4 address they carry.
func localClass(a netip.Addr) string {
	a = a.Unmap()
	if a.Is6() {
		b := a.As16()
		if nat64.Contains(a) || ipv4Compatible.Contains(a) && !a.IsLoopback() && !a.IsUnspecified() {
			if c := localClass(netip.AddrFrom4([4]byte(b[12:]))); c != "" {
				return c
			}
		}
	}
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast():
		return "link-local"
	case a.IsMulticast():
		return "multicast"
	}
	for _, p := range nonPublic {
		if p.prefix.Contains(a) {
			return p.class
		}
	}
	return ""
}

var (
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	ipv4Compatible = netip.MustParsePrefix("::/96")
	nonPublic      = [...]struct {
		prefix netip.Prefix
		class  string
	}{
		{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},        // "this network"; Linux connects 0.x to the host
		{netip.MustParsePrefix("100.64.0.0/10"), "private"},        // RFC 6598 shared address space (carrier NAT, VPN overlays)
		{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"}, // limited broadcast
		{netip.MustParsePrefix("fec0::/10"), "private"},            // deprecated site-local (RFC 3879)
	}
)

// hostClass classifies the host of a URL as written: "loopback" for
// localhost and its subdomains (RFC 6761 §6.3), else the class of an IP
// literal in any spelling a resolver may accept (dotted, IPv6 with or
// without zone, and the inet_aton forms: 2130706433, 0x7f.1, 0177.0.0.1,
// 127.1). A name is "" here; its addresses are checked when it is dialed.
func hostClass(host string) string {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return "loopback"
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return localClass(a.WithZone(""))
	}
	if a, ok := parseInetAton(h); ok {
		return localClass(a)
	}
	return ""
}

// parseInetAton parses the legacy IPv4 forms of inet_aton(3), which some
// resolvers (glibc's getaddrinfo through cgo) accept as addresses: one to
// four parts, each decimal, octal (leading 0) or hexadecimal (0x), the last
// part filling the remaining bytes.
func parseInetAton(s string) (netip.Addr, bool) {
	if s == "" {
		return netip.Addr{}, false
	}
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		base := 10
		switch {
		case len(p) > 1 && (p[:2] == "0x"):
			base, p = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, p = 8, p[1:]
		}
		if p == "" && base != 16 {
			return netip.Addr{}, false
		}
		if p == "" {
			p = "0" // "0x" alone is 0 to inet_aton
		}
		v, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 0xff {
			return netip.Addr{}, false
		}
		n |= v << (24 - 8*i)
	}
	last := vals[len(vals)-1]
	if last >= 1<<(32-8*(len(vals)-1)) {
		return netip.Addr{}, false
	}
	n |= last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// isLoopbackHost reports whether host is a loopback host by name or literal.
func isLoopbackHost(host string) bool { return hostClass(host) == "loopback" }

// checkSecure: https, or http to a loopback host (2026-07-28
// basic/authorization/security-considerations §Communication Security).
// It does not look at who asks; checkURL does.
func checkSecure(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("oauth: bad URL %q: %w", raw, err)
	}
	return checkSecureURL(u, raw)
}

func checkSecureURL(u *url.URL, raw string) error {
	switch strings.ToLower(u.Scheme) {
	case "https":
		if u.Host == "" {
			return fmt.Errorf("%w: %q has no host", ErrInsecureURL, raw)
		}
		return nil
	case "http":
		if u.Host != "" && isLoopbackHost(u.Hostname()) {
			return nil
		}
	}
	return fmt.Errorf("%w: %q", ErrInsecureURL, raw)
}

// checkURL checks a URL a flow is about to fetch or post to: secure
// (checkSecure) and, in a remote flow, naming no local address.
func checkURL(raw string, local bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("oauth: bad URL %q: %w", raw, err)
	}
	if !local {
		if c := hostClass(u.Hostname()); c != "" {
			return fmt.Errorf("%w: %q names a %s address", ErrLocalAddress, raw, c)
		}
	}
	return checkSecureURL(u, raw)
}

// checkClientMetadataURL: a Client ID Metadata Document URL is https (http
// on a loopback host) with a path and no fragment
// (2026-07-28 basic/authorization/client-registration §Client ID Metadata
// Documents).
func checkClientMetadataURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: ClientMetadataURL %q: %v", ErrInsecureURL, raw, err)
	}
	if err := checkSecureURL(u, raw); err != nil {
		return fmt.Errorf("ClientMetadataURL: %w", err)
	}
	if p := u.EscapedPath(); p == "" || p == "/" || u.Fragment != "" || u.RawFragment != "" || strings.Contains(raw, "#") {
		return fmt.Errorf("%w: ClientMetadataURL %q needs a path and no fragment", ErrInsecureURL, raw)
	}
	return nil
}

// dialInfo travels in the context of a remote flow's request to the dialer:
// the proxy the transport will dial for it, if any.
type dialInfo struct{ proxy string }

type dialInfoKey struct{}

// netHooks lets tests stand in for DNS and for the network: resolve names
// a host, dial connects to an address:port the guard has checked. Nil
// fields mean the real ones.
type netHooks struct {
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
}

// guard is the DialContext of a remote flow's transport. It resolves the
// host itself, refuses the connection if any address is local, and then
// connects to the checked addresses only, so a name that resolves to a
// public address when the URL is checked and to 127.0.0.1 when it is dialed
// (DNS rebinding) gets nowhere. The dial to the configured proxy is not
// checked: the proxy resolves the target, and only the URL check applies.
type guard struct {
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
}

func (g *guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if di, _ := ctx.Value(dialInfoKey{}).(*dialInfo); di != nil && di.proxy != "" && addr == di.proxy {
		return g.dial(ctx, network, addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	// A legacy IPv4 spelling (2130706433) is refused when it spells a local
	// address, whatever the resolver would make of it.
	if a, ok := parseInetAton(host); ok {
		if c := localClass(a); c != "" {
			return nil, fmt.Errorf("%w: %s is a %s address", ErrLocalAddress, host, c)
		}
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = g.resolve(ctx, host); err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("oauth: %s has no address", host)
	}
	for _, a := range addrs {
		if c := localClass(a); c != "" {
			return nil, fmt.Errorf("%w: %s resolves to %s, a %s address", ErrLocalAddress, host, a, c)
		}
	}
	var first error
	for _, a := range addrs {
		conn, err := g.dial(ctx, network, net.JoinHostPort(a.WithZone("").String(), port))
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

// refuseLocal is the Control of the remote flow's own net.Dialer: a last
// check on the address the socket is about to connect to.
func refuseLocal(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("oauth: dialing %q: %w", address, err)
	}
	if c := localClass(ap.Addr()); c != "" {
		return fmt.Errorf("%w: %s is a %s address", ErrLocalAddress, ap.Addr(), c)
	}
	return nil
}

// remoteClient builds the client of remote flows from base: a clone of its
// *http.Transport (http.DefaultTransport when nil) whose DialContext is the
// guard. A transport of another type, or one with a dialer of its own for
// TLS (DialTLSContext, DialTLS) or only the deprecated Dial, cannot be
// guarded at connect time: then only the URL checks apply.
func remoteClient(base *http.Client, hooks *netHooks) *http.Client {
	c := *base
	var tr *http.Transport
	switch t := base.Transport.(type) {
	case nil:
		tr = http.DefaultTransport.(*http.Transport).Clone()
	case *http.Transport:
		if t.DialTLSContext != nil || t.DialTLS != nil || t.Dial != nil && t.DialContext == nil {
			return &c
		}
		tr = t.Clone()
	default:
		return &c
	}
	g := &guard{dial: tr.DialContext}
	if g.dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: refuseLocal}
		g.dial = d.DialContext
	}
	r := &net.Resolver{}
	g.resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
		return r.LookupNetIP(ctx, "ip", host)
	}
	if hooks != nil {
		if hooks.dial != nil {
			g.dial = hooks.dial
		}
		if hooks.resolve != nil {
			g.resolve = hooks.resolve
		}
	}
	tr.DialContext = g.DialContext
	c.Transport = tr
	return &c
}

// proxyAddr is the address the transport of hc dials for req when it goes
// through a proxy, as the transport writes it (host:port, default ports by
// the proxy's scheme), or "".
func proxyAddr(hc *http.Client, req *http.Request) string {
	tr, ok := hc.Transport.(*http.Transport)
	if !ok || tr.Proxy == nil {
		return ""
	}
	p, err := tr.Proxy(req)
	if err != nil || p == nil {
		return ""
	}
	port := p.Port()
	if port == "" {
		switch strings.ToLower(p.Scheme) {
		case "https":
			port = "443"
		case "socks5", "socks5h":
			port = "1080"
		default:
			port = "80"
		}
	}
	return net.JoinHostPort(p.Hostname(), port)
}
