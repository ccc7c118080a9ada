package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client/oauth"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// TestMain points the token cache of every test in the package at a
// directory of its own, so that no test reads or writes the user's.
func TestMain(m *testing.M) {
	if w := os.Getenv(cacheWriterEnv); w != "" {
		os.Exit(cacheWriter(w))
	}
	dir, err := os.MkdirTemp("", "mcpfn-oauth-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv(tokenCacheEnv, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cacheAS is an MCP server that wants bearer tokens, with on the same
// origin an authorization server that counts what it is asked: RFC 7591
// registration (redirect URIs compared exactly, as some servers do),
// authorize with PKCE S256 and iss (RFC 9207), and the authorization_code
// and refresh_token grants, refresh tokens rotating (single use). Tokens
// carry scopes: the tool "admin" needs mcp:admin, and answers 403
// insufficient_scope without it.
type cacheAS struct {
	endpoint, base string

	mu            sync.Mutex
	ttl           int  // expires_in of the tokens issued
	refuseRefresh bool // the refresh_token grant answers invalid_grant
	registrations int
	authorized    int // authorization requests
	codeGrants    int
	refreshes     int               // refresh_token grants that succeeded
	clients       map[string]string // client_id → redirect URI
	codes         map[string]codeGrant
	access        map[string][]string // access token → scopes
	refresh       map[string]codeGrant
	lastAccess    string
	lastRefresh   string
}

type codeGrant struct{ client, redirect, challenge, scope string }

func newCacheAS(t *testing.T, ttl int) *cacheAS {
	t.Helper()
	as := &cacheAS{ttl: ttl, clients: map[string]string{}, codes: map[string]codeGrant{},
		access: map[string][]string{}, refresh: map[string]codeGrant{}}
	srv := core.NewServer(core.Implementation{Name: "cli-oauth-cache", Version: "1"}, nil)
	core.AddTool(srv, &core.Tool{Name: "echo"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
		return "secret", nil
	})
	core.AddTool(srv, &core.Tool{Name: "admin"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
		return "admin secret", nil
	})
	mux := http.NewServeMux()
	random := func() string { return rand.Text() }
	mux.Handle("/mcp", nethttp.NewHandler(srv, &nethttp.Options{Middleware: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			prm := `resource_metadata="` + as.base + `/.well-known/oauth-protected-resource/mcp"`
			tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			as.mu.Lock()
			scopes, ok := as.access[tok]
			as.mu.Unlock()
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer scope="mcp:read", `+prm)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"name":"admin"`)) && !slices.Contains(scopes, "mcp:admin") {
				w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="mcp:read mcp:admin", `+prm)
				w.WriteHeader(http.StatusForbidden)
				return
			}
			h.ServeHTTP(w, r)
		})
	}}))
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		mcptest.WriteJSON(w, 200, map[string]any{"resource": as.base + "/mcp", "authorization_servers": []string{as.base},
			"scopes_supported": []string{"mcp:read", "mcp:admin"}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		mcptest.WriteJSON(w, 200, map[string]any{"issuer": as.base, "authorization_endpoint": as.base + "/authorize", "token_endpoint": as.base + "/token",
			"registration_endpoint": as.base + "/register", "code_challenge_methods_supported": []string{"S256"},
			"scopes_supported": []string{"mcp:read", "mcp:admin", "offline_access"},
			"authorization_response_iss_parameter_supported": true})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var reg struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		json.NewDecoder(r.Body).Decode(&reg)
		if len(reg.RedirectURIs) != 1 {
			mcptest.WriteJSON(w, 400, map[string]string{"error": "invalid_redirect_uri"})
			return
		}
		id := "client-" + random()
		as.mu.Lock()
		as.registrations++
		as.clients[id] = reg.RedirectURIs[0]
		as.mu.Unlock()
		mcptest.WriteJSON(w, 201, map[string]any{"client_id": id, "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		as.mu.Lock()
		as.authorized++
		redirect, known := as.clients[q.Get("client_id")]
		ok := known && q.Get("redirect_uri") == redirect && q.Get("code_challenge_method") == "S256"
		code := random()
		if ok {
			as.codes[code] = codeGrant{client: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge"), scope: q.Get("scope")}
		}
		as.mu.Unlock()
		if !ok {
			http.Error(w, "bad authorization request", 400)
			return
		}
		http.Redirect(w, r, redirect+"?"+url.Values{"code": {code}, "state": {q.Get("state")}, "iss": {as.base}}.Encode(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		f := r.PostForm
		as.mu.Lock()
		defer as.mu.Unlock()
		var g codeGrant
		switch f.Get("grant_type") {
		case "authorization_code":
			c, ok := as.codes[f.Get("code")]
			delete(as.codes, f.Get("code"))
			sum := sha256.Sum256([]byte(f.Get("code_verifier")))
			if !ok || c.client != f.Get("client_id") || c.redirect != f.Get("redirect_uri") || base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge {
				mcptest.WriteJSON(w, 400, map[string]string{"error": "invalid_grant"})
				return
			}
			as.codeGrants++
			g = c
		case "refresh_token":
			c, ok := as.refresh[f.Get("refresh_token")]
			delete(as.refresh, f.Get("refresh_token"))
			if !ok || as.refuseRefresh || c.client != f.Get("client_id") {
				mcptest.WriteJSON(w, 400, map[string]string{"error": "invalid_grant"})
				return
			}
			as.refreshes++
			g = c
		default:
			mcptest.WriteJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
			return
		}
		at, rt := "at-"+random(), "rt-"+random()
		as.access[at] = strings.Fields(g.scope)
		as.refresh[rt] = g
		as.lastAccess, as.lastRefresh = at, rt
		mcptest.WriteJSON(w, 200, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": as.ttl, "refresh_token": rt, "scope": g.scope})
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	as.base = ts.URL
	as.endpoint = ts.URL + "/mcp"
	return as
}

// counts returns registrations, authorization requests, authorization
// code grants and refreshes.
func (as *cacheAS) counts() [4]int {
	as.mu.Lock()
	defer as.mu.Unlock()
	return [4]int{as.registrations, as.authorized, as.codeGrants, as.refreshes}
}

// forget makes the resource refuse every access token issued so far (the
// refresh tokens stay good).
func (as *cacheAS) forget() {
	as.mu.Lock()
	clear(as.access)
	as.mu.Unlock()
}

func (as *cacheAS) key() oauth.StoreKey {
	return oauth.StoreKey{Resource: as.endpoint, Issuer: as.base}
}

// browser replaces openBrowser with an HTTP client that follows the
// authorization server's redirect to the loopback listener, and counts
// the URLs it is given.
func browser(t *testing.T) (opened func() int) {
	urls := browserURLs(t)
	return func() int { return len(urls()) }
}

// browserURLs is browser returning the URLs it was given, in order.
func browserURLs(t *testing.T) (opened func() []string) {
	var mu sync.Mutex
	var urls []string
	old := openBrowser
	openBrowser = func(u string) error {
		mu.Lock()
		urls = append(urls, u)
		mu.Unlock()
		go func() {
			if resp, err := http.Get(u); err == nil {
				resp.Body.Close()
			}
		}()
		return nil
	}
	t.Cleanup(func() { openBrowser = old })
	return func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(urls) }
}

// cacheDir gives the test a token cache of its own.
func cacheDir(t *testing.T) string {
	d := filepath.Join(t.TempDir(), "oauth")
	t.Setenv(tokenCacheEnv, d)
	return d
}

// callTool runs mcpfn call URL TOOL --oauth and wants its answer to hold
// want.
func callTool(t *testing.T, as *cacheAS, tool, want string) string {
	t.Helper()
	// --timeout bounds a login that went wrong (the browser stuck on an
	// error page), so that the test fails rather than hangs.
	code, out, errs := mcpfn(t, "", "call", as.endpoint, tool, "--oauth", "--timeout", "30s")
	if code != 0 || !strings.Contains(out, want) {
		t.Fatalf("call %s: exit %d, stdout %s, stderr %s", tool, code, out, errs)
	}
	return errs
}

// readEntry reads the cache file of as's login.
func readEntry(t *testing.T, dir string, as *cacheAS) cacheFile {
	t.Helper()
	f, err := readCacheFile(filepath.Join(dir, cacheName(as.key())))
	if err != nil {
		t.Fatalf("cache file: %v", err)
	}
	return *f
}

// expire makes the saved access token of as expired, through the store.
func expire(t *testing.T, dir string, as *cacheAS) {
	t.Helper()
	c := &tokenCache{dir: dir, warn: io.Discard}
	e, err := c.Load(t.Context(), as.key())
	if err != nil || e == nil {
		t.Fatalf("load: %v %v", e, err)
	}
	e.Expiry = time.Now().Add(-time.Hour)
	if err := c.Save(t.Context(), as.key(), e); err != nil {
		t.Fatal(err)
	}
}

// TestOAuthCacheSecondRun: the second process for the same server uses
// the saved token: no registration, no authorization request, no token
// request, no browser.
func TestOAuthCacheSecondRun(t *testing.T) {
	dir := cacheDir(t)
	as := newCacheAS(t, 3600)
	opened := browser(t)
	callTool(t, as, "echo", `"secret"`)
	if got := as.counts(); got != [4]int{1, 1, 1, 0} || opened() != 1 {
		t.Fatalf("first run: counts %v, browser %d", got, opened())
	}
	errs := callTool(t, as, "echo", `"secret"`)
	if got := as.counts(); got != [4]int{1, 1, 1, 0} || opened() != 1 {
		t.Fatalf("second run: counts %v (want no new registration, authorization or token), browser %d; stderr %s", got, opened(), errs)
	}
	if strings.Contains(errs, "authorize in your browser") {
		t.Fatalf("second run asked for the browser: %s", errs)
	}

	// The file: private, in a private directory, named by a hash, holding
	// the tokens, their expiry, the scopes and the registration.
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 1 {
		t.Fatalf("cache dir: %v %v", ents, err)
	}
	name := ents[0].Name()
	if name != cacheName(as.key()) || strings.Contains(name, "127.0.0.1") {
		t.Fatalf("file name %q", name)
	}
	if runtime.GOOS != "windows" {
		fi, _ := os.Stat(filepath.Join(dir, name))
		di, _ := os.Stat(dir)
		if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
			t.Fatalf("file mode %v, directory mode %v", fi.Mode(), di.Mode())
		}
	}
	f := readEntry(t, dir, as)
	as.mu.Lock()
	wantAT, wantRT := as.lastAccess, as.lastRefresh
	var client, redirect string
	for id, r := range as.clients {
		client, redirect = id, r
	}
	as.mu.Unlock()
	if f.AccessToken != wantAT || f.RefreshToken != wantRT || f.ClientID != client || f.Registration == nil ||
		f.Registration.ClientID != client || f.RedirectURI != redirect || f.Endpoint != as.endpoint ||
		!slices.Equal(f.Scopes, []string{"mcp:read"}) || time.Until(f.Expiry) < 30*time.Minute {
		t.Fatalf("entry %+v", f)
	}
}

// TestOAuthCacheExpired: an expired saved token is refreshed with the
// saved refresh token and client, without a browser, and the new tokens
// are saved.
func TestOAuthCacheExpired(t *testing.T) {
	dir := cacheDir(t)
	as := newCacheAS(t, 3600)
	opened := browser(t)
	callTool(t, as, "echo", `"secret"`)
	expire(t, dir, as)
	callTool(t, as, "echo", `"secret"`)
	if got := as.counts(); got != [4]int{1, 1, 1, 1} || opened() != 1 {
		t.Fatalf("counts %v (want one refresh, no new authorization), browser %d", got, opened())
	}
	f := readEntry(t, dir, as)
	as.mu.Lock()
	wantAT, wantRT := as.lastAccess, as.lastRefresh
	as.mu.Unlock()
	if f.AccessToken != wantAT || f.RefreshToken != wantRT || time.Until(f.Expiry) < 30*time.Minute {
		t.Fatalf("entry after the refresh %+v; want %s %s", f, wantAT, wantRT)
	}
}

// TestOAuthCacheRevoked: a saved token the server no longer takes (401)
// is refreshed, not replaced by a browser login.
func TestOAuthCacheRevoked(t *testing.T) {
	cacheDir(t)
	as := newCacheAS(t, 3600)
	opened := browser(t)
	callTool(t, as, "echo", `"secret"`)
	as.forget()
	callTool(t, as, "echo", `"secret"`)
	if got := as.counts(); got != [4]int{1, 1, 1, 1} || opened() != 1 {
		t.Fatalf("counts %v, browser %d", got, opened())
	}
}

// TestOAuthCacheRefreshRefused: when the refresh token is refused
// (invalid_grant) the browser logs in again and its tokens replace the
// entry. The listener's port is a new one, and this server compares
// redirect URIs exactly: the client registers again.
func TestOAuthCacheRefreshRefused(t *testing.T) {
	dir := cacheDir(t)
	as := newCacheAS(t, 3600)
	opened := browser(t)
	callTool(t, as, "echo", `"secret"`)
	old := readEntry(t, dir, as)
	expire(t, dir, as)
	as.mu.Lock()
	as.refuseRefresh = true
	as.mu.Unlock()
	callTool(t, as, "echo", `"secret"`)
	if got := as.counts(); got != [4]int{2, 2, 2, 0} || opened() != 2 {
		t.Fatalf("counts %v, browser %d", got, opened())
	}
	f := readEntry(t, dir, as)
	as.mu.Lock()
	wantAT := as.lastAccess
	as.mu.Unlock()
	if f.AccessToken != wantAT || f.ClientID == old.ClientID || f.RedirectURI == old.RedirectURI || time.Until(f.Expiry) < 30*time.Minute {
		t.Fatalf("entry %+v, old %+v", f, old)
	}
}

// TestOAuthCacheStepUp: a 403 insufficient_scope logs in again with more
// scopes, and that login replaces the entry: the next process calls the
// tool with the saved token.
func TestOAuthCacheStepUp(t *testing.T) {
	dir := cacheDir(t)
	as := newCacheAS(t, 3600)
	opened := browser(t)
	callTool(t, as, "admin", `"admin secret"`)
	if got := as.counts(); got[1] != 2 || opened() != 2 {
		t.Fatalf("step-up: counts %v, browser %d", got, opened())
	}
	if f := readEntry(t, dir, as); !slices.Contains(f.Scopes, "mcp:admin") {
		t.Fatalf("entry scopes %q", f.Scopes)
	}
	before := as.counts()
	callTool(t, as, "admin", `"admin secret"`)
	if got := as.counts(); got != before || opened() != 2 {
		t.Fatalf("after the step-up: counts %v, was %v; browser %d", got, before, opened())
	}
}

// TestOAuthCacheBadFiles: a cache file that is corrupt, too large, not a
// regular file, readable by others, of another format or of another key is
// ignored with a warning, the browser logs in, and a good entry replaces
// it.
func TestOAuthCacheBadFiles(t *testing.T) {
	good := func(as *cacheAS) []byte {
		b, _ := json.Marshal(cacheFile{Version: cacheVersion, Resource: as.endpoint, Issuer: as.base, AccessToken: "planted",
			ClientID: "planted", Expiry: time.Now().Add(time.Hour)})
		return b
	}
	cases := []struct {
		name  string
		write func(t *testing.T, p string, as *cacheAS)
		warn  string
		unix  bool
	}{
		{"corrupt", func(t *testing.T, p string, _ *cacheAS) { os.WriteFile(p, []byte(`{"version":1,"access_tok`), 0o600) }, "not a cache entry", false},
		{"oversized", func(t *testing.T, p string, as *cacheAS) {
			b := good(as)
			b = append(b[:len(b)-1], []byte(`,"pad":"`+strings.Repeat("x", maxCacheFile)+`"}`)...)
			os.WriteFile(p, b, 0o600)
		}, "larger than", false},
		{"directory", func(t *testing.T, p string, _ *cacheAS) { os.Mkdir(p, 0o700) }, "not a regular file", false},
		{"symlink", func(t *testing.T, p string, as *cacheAS) {
			other := filepath.Join(t.TempDir(), "x.json")
			os.WriteFile(other, good(as), 0o600)
			if err := os.Symlink(other, p); err != nil {
				t.Skip(err)
			}
		}, "not a regular file", false},
		{"world-readable", func(t *testing.T, p string, as *cacheAS) { os.WriteFile(p, good(as), 0o644); os.Chmod(p, 0o644) }, "others may read", true},
		{"version", func(t *testing.T, p string, as *cacheAS) {
			os.WriteFile(p, bytes.Replace(good(as), []byte(`"version":1`), []byte(`"version":9`), 1), 0o600)
		}, "format version 9", false},
		{"other key", func(t *testing.T, p string, as *cacheAS) {
			os.WriteFile(p, bytes.Replace(good(as), []byte(as.base+`"`), []byte(`https://evil.example"`), 1), 0o600)
		}, "another resource", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.unix && runtime.GOOS == "windows" {
				t.Skip("Unix permissions")
			}
			dir := cacheDir(t)
			as := newCacheAS(t, 3600)
			opened := browser(t)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, cacheName(as.key()))
			tc.write(t, p, as)
			errs := callTool(t, as, "echo", `"secret"`)
			if !strings.Contains(errs, "OAuth token cache: ignoring") || !strings.Contains(errs, tc.warn) || opened() != 1 {
				t.Fatalf("browser %d; stderr %s", opened(), errs)
			}
			if tc.name == "directory" {
				return // the directory stays; the save fails, with a warning
			}
			f := readEntry(t, dir, as)
			as.mu.Lock()
			wantAT := as.lastAccess
			as.mu.Unlock()
			if f.AccessToken != wantAT {
				t.Fatalf("the bad file was not replaced: %+v", f)
			}
		})
	}
}

// cacheWriterEnv makes the test binary a writer process of
// TestOAuthCacheConcurrent: LETTER, saving concurrentSaves entries of that
// letter into the cache of tokenCacheEnv.
const cacheWriterEnv = "MCPFN_TEST_CACHE_WRITER"

const concurrentSaves = 25

var concurrentKey = oauth.StoreKey{Resource: "https://mcp.example/mcp", Issuer: "https://as.example"}

// concurrentEntry is the entry writer letter saves: every field says
// which writer wrote it, so a mixture of two shows.
func concurrentEntry(letter string) *oauth.StoreEntry {
	return &oauth.StoreEntry{AccessToken: strings.Repeat(letter, 2048), RefreshToken: "r" + letter, ClientID: "c" + letter}
}

func cacheWriter(letter string) int {
	c := &tokenCache{dir: os.Getenv(tokenCacheEnv), warn: os.Stderr}
	for range concurrentSaves {
		if err := c.Save(context.Background(), concurrentKey, concurrentEntry(letter)); err != nil {
			return 1
		}
	}
	return 0
}

// TestOAuthCacheConcurrent: processes saving the same entry at once (the
// rename is atomic) leave a complete entry, which a reader sees whole at
// every moment, and no temporary files.
func TestOAuthCacheConcurrent(t *testing.T) {
	dir := cacheDir(t)
	key := concurrentKey
	const writers = 6
	stop := make(chan struct{})
	var readErr error
	var rmu sync.Mutex
	reader := make(chan struct{})
	go func() {
		defer close(reader)
		c := &tokenCache{dir: dir, warn: io.Discard}
		for {
			select {
			case <-stop:
				return
			default:
			}
			e, err := c.Load(context.Background(), key)
			if err == nil && e != nil && (len(e.AccessToken) != 2048 || !reflect.DeepEqual(e, concurrentEntry(e.AccessToken[:1]))) {
				err = fmt.Errorf("a mixed entry: %.20s… %q", e.AccessToken, e.RefreshToken)
			}
			if err != nil {
				rmu.Lock()
				readErr = err
				rmu.Unlock()
				return
			}
		}
	}()
	// Writer processes: the test binary again, in cacheWriter.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range writers {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), cacheWriterEnv+"="+string(rune('a'+w)))
		wg.Go(func() {
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("writer: %v\n%s", err, out)
			}
		})
	}
	wg.Wait()
	close(stop)
	<-reader
	if readErr != nil {
		t.Fatal(readErr)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != cacheName(key) {
		t.Fatalf("files left: %v", ents)
	}
}

// TestOAuthCacheOff: MCPFN_OAUTH_CACHE=off keeps nothing: every process
// logs in.
func TestOAuthCacheOff(t *testing.T) {
	t.Setenv(tokenCacheEnv, "off")
	as := newCacheAS(t, 3600)
	opened := browser(t)
	callTool(t, as, "echo", `"secret"`)
	callTool(t, as, "echo", `"secret"`)
	if opened() != 2 {
		t.Fatalf("browser %d", opened())
	}
	t.Setenv(tokenCacheEnv, "relative/dir")
	if errs := callTool(t, as, "echo", `"secret"`); !strings.Contains(errs, "token cache off") || opened() != 3 {
		t.Fatalf("a relative %s: browser %d, stderr %s", tokenCacheEnv, opened(), errs)
	}
}

// TestLogout: mcpfn logout URL removes the saved login of URL (and of
// nothing else); the next process logs in again.
func TestLogout(t *testing.T) {
	dir := cacheDir(t)
	as, other := newCacheAS(t, 3600), newCacheAS(t, 3600)
	opened := browser(t)
	callTool(t, as, "echo", `"secret"`)
	callTool(t, other, "echo", `"secret"`)
	logout := func(args ...string) (int, string) {
		cfg, err := parseArgs(append([]string{"logout"}, args...))
		if err != nil {
			t.Fatal(err)
		}
		var errb bytes.Buffer
		code := logoutCmd(cfg, &errb, func(msg string) int { errb.WriteString(msg); return exitUsage })
		return code, errb.String()
	}
	if code, errs := logout(as.endpoint); code != exitOK || !strings.Contains(errs, "removed 1 saved login") {
		t.Fatalf("logout: %d %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, cacheName(as.key()))); !os.IsNotExist(err) {
		t.Fatalf("the entry is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, cacheName(other.key()))); err != nil {
		t.Fatalf("the other server's entry: %v", err)
	}
	if code, errs := logout(as.endpoint); code != exitOK || !strings.Contains(errs, "no saved login") {
		t.Fatalf("second logout: %d %s", code, errs)
	}
	callTool(t, as, "echo", `"secret"`)
	if opened() != 3 {
		t.Fatalf("after logout: browser %d", opened())
	}
	if code, _ := logout(); code != exitUsage {
		t.Fatalf("logout without URL: %d", code)
	}
	if code, _ := logout("localhost:1/mcp"); code != exitUsage {
		t.Fatalf("logout of a bad URL: %d", code)
	}
}

// TestStdioOAuthCache: mcpfn stdio --oauth, started twice as a desktop
// host does, asks the browser once; a bridge whose tokens expire while it
// runs refreshes them and saves each refresh, so the next start finds the
// latest refresh token (the older ones are spent: they rotate).
func TestStdioOAuthCache(t *testing.T) {
	dir := cacheDir(t)
	// expires_in 1: within the renewal margin at once, so every request
	// refreshes first.
	as := newCacheAS(t, 1)
	opened := browser(t)
	bridge := func(id int) {
		h := startHost(t, as.endpoint, "--oauth")
		for i := range 2 {
			resp, _ := h.call(id+i, "tools/call", `{"name":"echo",`+modernMetaJSON+`}}`, nil)
			if got := text(t, resp); got != "secret" {
				t.Fatalf("call: %q; stderr %s", got, h.stderrText())
			}
		}
		if code := h.exit(); code != 0 {
			t.Fatalf("exit %d; stderr %s", code, h.stderrText())
		}
	}
	bridge(1)
	if opened() != 1 || as.counts()[3] == 0 {
		t.Fatalf("first start: browser %d, counts %v", opened(), as.counts())
	}
	as.mu.Lock()
	wantRT := as.lastRefresh
	as.mu.Unlock()
	if f := readEntry(t, dir, as); f.RefreshToken != wantRT {
		t.Fatalf("saved refresh token %q, latest %q", f.RefreshToken, wantRT)
	}
	bridge(10)
	if got := as.counts(); opened() != 1 || got[1] != 1 {
		t.Fatalf("second start: browser %d, counts %v", opened(), got)
	}
}
