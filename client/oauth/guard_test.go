package oauth_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/client/oauth"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// fakeNet is a small public internet for the tests: names resolve to
// TEST-NET-3 addresses (203.0.113.0/24, public as far as the client can
// tell), or to whatever a test makes them resolve to, and connections to
// those addresses reach servers on loopback. Everything the client resolves
// and dials is recorded.
type fakeNet struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr // name → successive answers; the last repeats
	routes  map[netip.Addr]string     // public address → loopback host:port
	proxy   string                    // the loopback proxy the client may dial
	dials   []string
}

func (n *fakeNet) setName(name string, answers ...[]netip.Addr) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.answers[name] = answers
}

func (n *fakeNet) resolve(_ context.Context, host string) ([]netip.Addr, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	a := n.answers[host]
	if len(a) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	first := a[0]
	if len(a) > 1 {
		n.answers[host] = a[1:]
	}
	return first, nil
}

func (n *fakeNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	n.mu.Lock()
	n.dials = append(n.dials, addr)
	to := ""
	if addr == n.proxy {
		to = addr
	} else if ap, err := netip.ParseAddrPort(addr); err == nil {
		to = n.routes[ap.Addr()]
	}
	n.mu.Unlock()
	if to == "" {
		return nil, fmt.Errorf("fakeNet: no route to %s", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, to)
}

func (n *fakeNet) dialed() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.dials...)
}

// world is a remote MCP server (mcp.example.test) and its authorization
// server (as.example.test) on the fake internet, both behind one TLS
// server, and a local admin API on loopback that nothing may reach.
type world struct {
	net    *fakeNet
	tls    *httptest.Server
	pool   *x509.CertPool
	admin  *httptest.Server
	hits   atomic.Int32 // requests at the admin API
	mu     sync.Mutex
	asMeta map[string]string // metadata fields replaced
	tokens atomic.Int32
}

var (
	mcpAddr    = netip.MustParseAddr("203.0.113.1")
	asAddr     = netip.MustParseAddr("203.0.113.2")
	rebindAddr = netip.MustParseAddr("203.0.113.3")
)

const remoteEndpoint = "https://mcp.example.test/mcp"

func newWorld(t *testing.T) *world {
	w := &world{asMeta: map[string]string{}}
	w.admin = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.hits.Add(1)
		mcptest.WriteJSON(rw, 200, map[string]any{"resource": remoteEndpoint, "authorization_servers": []string{"https://as.example.test"},
			"access_token": "leaked", "client_id": "leaked"})
	}))
	t.Cleanup(w.admin.Close)
	cert, pool := testCert(t, "*.example.test")
	w.pool = pool
	w.tls = httptest.NewUnstartedServer(http.HandlerFunc(w.serve))
	w.tls.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	w.tls.StartTLS()
	t.Cleanup(w.tls.Close)
	at := w.tls.Listener.Addr().String()
	w.net = &fakeNet{answers: map[string][][]netip.Addr{}, routes: map[netip.Addr]string{mcpAddr: at, asAddr: at, rebindAddr: at}}
	w.net.setName("mcp.example.test", []netip.Addr{mcpAddr})
	w.net.setName("as.example.test", []netip.Addr{asAddr})
	return w
}

func (w *world) serve(rw http.ResponseWriter, r *http.Request) {
	host, _, _ := strings.Cut(r.Host, ":")
	switch {
	case host == "mcp.example.test" && r.URL.Path == "/.well-known/oauth-protected-resource/mcp":
		mcptest.WriteJSON(rw, 200, map[string]any{"resource": remoteEndpoint, "authorization_servers": []string{"https://as.example.test"}})
	case host == "rebind.example.test" && r.URL.Path == "/prm":
		// A new connection for the next request: the name is looked up
		// again.
		rw.Header().Set("Connection", "close")
		mcptest.WriteJSON(rw, 200, map[string]any{"resource": remoteEndpoint, "authorization_servers": []string{"https://rebind.example.test"}})
	case host == "as.example.test" && r.URL.Path == "/.well-known/oauth-authorization-server":
		base := "https://as.example.test"
		m := map[string]any{"issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
			"registration_endpoint": base + "/register", "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic"}}
		w.mu.Lock()
		for k, v := range w.asMeta {
			m[k] = v
		}
		w.mu.Unlock()
		mcptest.WriteJSON(rw, 200, m)
	case host == "as.example.test" && r.URL.Path == "/register":
		mcptest.WriteJSON(rw, 201, map[string]any{"client_id": "remote-client", "client_secret": "remote-secret", "token_endpoint_auth_method": "client_secret_basic"})
	case host == "as.example.test" && r.URL.Path == "/authorize":
		q := r.URL.Query()
		http.Redirect(rw, r, q.Get("redirect_uri")+"?"+url.Values{"code": {"c"}, "state": {q.Get("state")}, "iss": {"https://as.example.test"}}.Encode(), http.StatusFound)
	case host == "as.example.test" && r.URL.Path == "/token":
		w.tokens.Add(1)
		mcptest.WriteJSON(rw, 200, map[string]any{"access_token": "remote-token", "token_type": "Bearer", "expires_in": 3600})
	default:
		http.NotFound(rw, r)
	}
}

// source is a Source on the fake internet; the user agent (Headless) gets
// there through the same names.
func (w *world) source(t *testing.T, tr *http.Transport) *oauth.Source {
	if tr == nil {
		tr = &http.Transport{}
	}
	tr.TLSClientConfig = &tls.Config{RootCAs: w.pool}
	ua := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: w.pool}, Proxy: tr.Proxy,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == w.net.proxy {
				return w.net.dial(ctx, network, addr)
			}
			host, port, _ := net.SplitHostPort(addr)
			as, err := w.net.resolve(ctx, host)
			if err != nil {
				return nil, err
			}
			return w.net.dial(ctx, network, net.JoinHostPort(as[0].String(), port))
		}}}
	t.Cleanup(ua.CloseIdleConnections)
	t.Cleanup(tr.CloseIdleConnections)
	src := oauth.New(&oauth.Config{HTTPClient: &http.Client{Transport: tr}, RedirectURL: redirect, Authorize: oauth.Headless(ua)})
	oauth.SetNetwork(src, w.net.resolve, w.net.dial)
	return src
}

func (w *world) challenge(t *testing.T, src *oauth.Source, prm string) error {
	if prm == "" {
		prm = "https://mcp.example.test/.well-known/oauth-protected-resource/mcp"
	}
	return src.Challenge(t.Context(), remoteEndpoint, challenge401(`Bearer resource_metadata="`+prm+`"`))
}

// testCert is a self-signed certificate for name and a pool trusting it.
func testCert(t *testing.T, name string) (tls.Certificate, *x509.CertPool) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// TestRemoteFlow: the whole flow of a remote endpoint runs through the
// connect-time guard when every server is public.
func TestRemoteFlow(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	if err := w.challenge(t, w.source(t, nil), ""); err != nil {
		t.Fatal(err)
	}
	if w.tokens.Load() != 1 {
		t.Fatalf("%d token requests", w.tokens.Load())
	}
	for _, d := range w.net.dialed() {
		if !strings.HasPrefix(d, "203.0.113.") {
			t.Fatalf("dialed %s", d)
		}
	}
}

// TestRemoteRefusesLocal: in the flow of a remote endpoint no URL may name
// a loopback, private, link-local or unspecified address, in any spelling
// of an IP literal, and no name may resolve to one: each is refused
// (ErrLocalAddress) before a connection is made, and the local admin API
// gets nothing.
func TestRemoteRefusesLocal(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	_, port, _ := net.SplitHostPort(w.admin.Listener.Addr().String())
	literals := []string{
		"http://127.0.0.1:" + port + "/prm", "https://127.0.0.1:" + port + "/prm", "https://localhost:" + port + "/prm",
		"https://LOCALHOST./prm", "https://api.localhost/prm", "https://127.0.0.1./prm", "https://127.1/prm",
		"https://2130706433/prm", "https://0x7f000001/prm", "https://0177.0.0.1/prm", "https://0x7f.0.0.1/prm",
		"https://[::1]/prm", "https://[::ffff:127.0.0.1]/prm", "https://[::ffff:7f00:1]/prm", "https://[0:0:0:0:0:ffff:7f00:1]/prm",
		"https://[64:ff9b::7f00:1]/prm", "https://[::7f00:1]/prm",
		"https://0/prm", "https://0.0.0.0/prm", "https://[::]/prm", "https://0.1.2.3/prm",
		"https://10.0.0.1/prm", "https://172.16.5.4/prm", "https://192.168.1.1/prm", "https://167772161/prm", "https://100.64.0.1/prm",
		"https://[fd00:ec2::254]/prm", "https://[fc00::1]/prm", "https://[fec0::1]/prm",
		"https://169.254.169.254/latest/meta-data/", "https://2852039166/latest/meta-data/", "https://[::ffff:169.254.169.254]/",
		"https://[fe80::1%25eth0]/prm", "https://[fe80::1]/prm",
	}
	for _, u := range literals {
		err := w.challenge(t, w.source(t, nil), u)
		if !errors.Is(err, oauth.ErrLocalAddress) {
			t.Errorf("resource_metadata %s: %v, want ErrLocalAddress", u, err)
		}
	}
	if d := w.net.dialed(); len(d) != 0 {
		t.Fatalf("literal local URLs were dialed: %v", d)
	}

	// Names that resolve to local addresses when dialed.
	for _, answer := range []string{"127.0.0.1", "10.1.2.3", "169.254.169.254", "::1", "::ffff:127.0.0.1", "fe80::1", "0.0.0.0", "fd12::1", "203.0.113.9 127.0.0.1"} {
		var addrs []netip.Addr
		for _, a := range strings.Fields(answer) {
			addrs = append(addrs, netip.MustParseAddr(a))
		}
		w.net.setName("internal.example.test", addrs)
		err := w.challenge(t, w.source(t, nil), "https://internal.example.test/prm")
		if !errors.Is(err, oauth.ErrLocalAddress) {
			t.Errorf("a name resolving to %s: %v, want ErrLocalAddress", answer, err)
		}
	}
	if d := w.net.dialed(); len(d) != 0 {
		t.Fatalf("names resolving to local addresses were dialed: %v", d)
	}

	// Authorization server metadata naming local endpoints: no
	// registration JSON and no token request (with the client's
	// credentials) goes there. The authorization endpoint is the user
	// agent's to visit (a browser; Headless has its own client), so only
	// its URL is checked.
	for _, field := range []string{"registration_endpoint", "token_endpoint", "authorization_endpoint"} {
		for _, target := range []string{"http://127.0.0.1:" + port + "/x", "https://internal.example.test/x"} {
			if field == "authorization_endpoint" && strings.Contains(target, "internal") {
				continue
			}
			w.mu.Lock()
			w.asMeta = map[string]string{field: target}
			w.mu.Unlock()
			w.net.setName("internal.example.test", []netip.Addr{netip.MustParseAddr("127.0.0.1")})
			err := w.challenge(t, w.source(t, nil), "")
			if !errors.Is(err, oauth.ErrLocalAddress) {
				t.Errorf("%s %s: %v, want ErrLocalAddress", field, target, err)
			}
		}
	}
	if w.hits.Load() != 0 {
		t.Fatalf("the local admin API got %d requests", w.hits.Load())
	}
	if w.tokens.Load() != 0 {
		t.Fatalf("%d token requests", w.tokens.Load())
	}
}

// TestDNSRebinding: a name that resolves to a public address when first
// used and to 127.0.0.1 on the next lookup (DNS rebinding) does not get the
// second connection to loopback: the check runs on the addresses of every
// connection, not on the URL or an earlier lookup.
func TestDNSRebinding(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.net.setName("rebind.example.test", []netip.Addr{rebindAddr}, []netip.Addr{netip.MustParseAddr("127.0.0.1")})
	err := w.challenge(t, w.source(t, nil), "https://rebind.example.test/prm")
	if !errors.Is(err, oauth.ErrLocalAddress) {
		t.Fatalf("rebound name: %v, want ErrLocalAddress", err)
	}
	d := w.net.dialed()
	if len(d) != 1 || d[0] != rebindAddr.String()+":443" {
		t.Fatalf("dialed %v, want the public address once", d)
	}
}

// TestRemoteThroughProxy: behind the configured proxy (on loopback here)
// the flow works, the proxy being the one local address the client
// dials; a URL naming a local address is still refused.
func TestRemoteThroughProxy(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var tunnels atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(rw, "CONNECT only", 405)
			return
		}
		host, port, _ := net.SplitHostPort(r.Host)
		as, err := w.net.resolve(r.Context(), host)
		if err != nil || port != "443" {
			http.Error(rw, "no such host", 502)
			return
		}
		up, err := net.Dial("tcp", w.net.routes[as[0]])
		if err != nil {
			http.Error(rw, err.Error(), 502)
			return
		}
		tunnels.Add(1)
		conn, buf, _ := rw.(http.Hijacker).Hijack()
		io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n")
		go func() { io.Copy(up, bufio.NewReader(io.MultiReader(buf, conn))); up.Close() }()
		io.Copy(conn, up)
		conn.Close()
	}))
	t.Cleanup(proxy.Close)
	pu, _ := url.Parse(proxy.URL)
	w.net.proxy = pu.Host
	src := w.source(t, &http.Transport{Proxy: http.ProxyURL(pu)})
	if err := w.challenge(t, src, ""); err != nil {
		t.Fatal(err)
	}
	if tunnels.Load() == 0 || w.tokens.Load() != 1 {
		t.Fatalf("%d tunnels, %d tokens", tunnels.Load(), w.tokens.Load())
	}
	for _, d := range w.net.dialed() {
		if d != pu.Host {
			t.Fatalf("dialed %s around the proxy", d)
		}
	}
	src = w.source(t, &http.Transport{Proxy: http.ProxyURL(pu)})
	if err := w.challenge(t, src, "https://169.254.169.254/latest/meta-data/"); !errors.Is(err, oauth.ErrLocalAddress) {
		t.Fatalf("through the proxy: %v, want ErrLocalAddress", err)
	}
}

// TestAddressClasses: the classification behind the policy.
func TestAddressClasses(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]string{
		"localhost": "loopback", "a.b.localhost": "loopback", "127.0.0.53": "loopback", "2130706433": "loopback", "127.1": "loopback",
		"0x7F.0.0.1": "loopback", "::ffff:127.0.0.1": "loopback", "10.0.0.1": "private", "192.168.0.1": "private", "fd00::1": "private",
		"169.254.169.254": "link-local", "fe80::1%eth0": "link-local", "0.0.0.0": "unspecified", "::": "unspecified", "0": "unspecified",
		"100.100.100.100": "private", "224.0.0.1": "multicast", "ff02::1": "multicast", "255.255.255.255": "broadcast",
		"example.com": "", "8.8.8.8": "", "2001:4860:4860::8888": "", "203.0.113.1": "", "1.2.3.4.5": "", "0x1g": "", "256.1.1.1": "",
		"::ffff:8.8.8.8": "", "64:ff9b::808:808": "", "localhost.example.com": "",
	} {
		if got := oauth.HostClass(host); got != want {
			t.Errorf("HostClass(%q) = %q, want %q", host, got, want)
		}
	}
}
