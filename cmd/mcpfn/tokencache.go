package main

// The token cache of --oauth: the client/oauth Store that keeps the
// browser login of one protected resource on disk, so that the next
// process (above all mcpfn stdio, which desktop hosts spawn again and
// again) reuses it.
//
// Where: $MCPFN_OAUTH_CACHE when it names a directory, else
// os.UserCacheDir()/mcpfn/oauth ($XDG_CACHE_HOME or ~/.cache on Linux,
// ~/Library/Caches on macOS, %LocalAppData% on Windows).
// MCPFN_OAUTH_CACHE=off keeps nothing and reads nothing. The cache
// directory, not the config directory, because an entry is state the
// program can rebuild (losing it costs one login, never a setting), and
// because cache directories are not synced or roamed to other machines
// (%LocalAppData% does not roam, unlike %AppData%): a refresh token stays
// on the machine it was issued to.
//
// One file per protected resource and authorization server: the name is
// a hash of both (the URLs themselves never make a path), the content a
// JSON object with the access token, its expiry, the refresh token, the
// scopes, and the dynamic client registration (client_id, and a secret if
// the server issued one) with the redirect URI it was registered for. The
// directory is made 0700 and each file 0600, written whole to a temporary
// file in the same directory and renamed over the old one, so that two
// processes saving at once leave one complete entry, never a mixture. A
// file is read only when it is a regular file, at most maxCacheFile
// bytes, (on Unix) owned by the user and not readable or writable by
// anyone else, and names the key it is stored under; any other is ignored
// with a warning on stderr, and the browser login overwrites it.
//
// logoutCmd (mcpfn logout URL) removes the entries of one URL; deleting
// the directory removes them all.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpfn/mcpfn/client/oauth"
)

// tokenCacheEnv overrides the cache directory ("off": no cache).
const tokenCacheEnv = "MCPFN_OAUTH_CACHE"

// maxCacheFile bounds what is read of one cache file: an entry is a few
// kilobytes even with long JWTs and many scopes.
const maxCacheFile = 64 << 10

// cacheVersion is the format of a cache file; a file of another version
// is ignored (and overwritten by the next login).
const cacheVersion = 1

// tokenCacheDir returns the directory of the token cache, or "" when the
// cache is off.
func tokenCacheDir() (string, error) {
	switch v := os.Getenv(tokenCacheEnv); {
	case strings.EqualFold(v, "off"):
		return "", nil
	case v != "":
		if !filepath.IsAbs(v) {
			return "", fmt.Errorf("%s must be an absolute directory or off, not %q", tokenCacheEnv, v)
		}
		return v, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "mcpfn", "oauth"), nil
}

// tokenCache is the on-disk oauth.Store of one --oauth endpoint.
type tokenCache struct {
	dir      string
	endpoint string    // recorded in the entries, for logout
	warn     io.Writer // warnings: a file ignored, a save that failed
}

var _ oauth.Store = (*tokenCache)(nil)

// cacheFile is the JSON of one entry.
type cacheFile struct {
	Version      int       `json:"version"`
	Resource     string    `json:"resource"`
	Issuer       string    `json:"issuer"`
	Endpoint     string    `json:"endpoint,omitempty"`
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	Scopes       []string  `json:"scopes,omitempty"`
	ClientID     string    `json:"client_id"`
	Registration *struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret,omitempty"`
		AuthMethod   string `json:"token_endpoint_auth_method,omitempty"`
	} `json:"registration,omitempty"`
	RedirectURI string    `json:"redirect_uri,omitempty"`
	Saved       time.Time `json:"saved"`
}

// cacheName is the file name of key: a hash, so that no part of a URL the
// server chose reaches the file system.
func cacheName(key oauth.StoreKey) string {
	sum := sha256.Sum256([]byte(key.Resource + "\x00" + key.Issuer))
	return hex.EncodeToString(sum[:16]) + ".json"
}

func (c *tokenCache) warnf(format string, args ...any) {
	fmt.Fprintf(c.warn, "mcpfn: OAuth token cache: "+format+"\n", args...)
}

// Load reads the entry of key; a missing file is no entry, and so is a
// file that is not safe to use (with a warning).
func (c *tokenCache) Load(_ context.Context, key oauth.StoreKey) (*oauth.StoreEntry, error) {
	p := filepath.Join(c.dir, cacheName(key))
	f, err := readCacheFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		c.warnf("ignoring %s: %v", p, err)
		return nil, err
	}
	if f.Resource != key.Resource || f.Issuer != key.Issuer {
		err := errors.New("it is the entry of another resource or authorization server")
		c.warnf("ignoring %s: %v", p, err)
		return nil, err
	}
	e := &oauth.StoreEntry{AccessToken: f.AccessToken, RefreshToken: f.RefreshToken, Expiry: f.Expiry,
		Scopes: f.Scopes, ClientID: f.ClientID, RedirectURL: f.RedirectURI}
	if r := f.Registration; r != nil {
		e.Registration = &oauth.Client{ID: r.ClientID, Secret: r.ClientSecret, AuthMethod: r.AuthMethod, Issuer: key.Issuer}
	}
	return e, nil
}

// readCacheFile reads and decodes one cache file, refusing what is not a
// private regular file of at most maxCacheFile bytes in this format.
func readCacheFile(p string) (*cacheFile, error) {
	if err := notSymlink(p); err != nil {
		return nil, err
	}
	// Checked on the file opened, not on the path, so that an entry
	// renamed into place meanwhile is read whole, and no other file is.
	// The open neither follows a symbolic link nor waits on a FIFO
	// (openFlags, on Unix).
	fd, err := os.OpenFile(p, os.O_RDONLY|openFlags, 0)
	if err != nil {
		if isSymlinkErr(err) {
			return nil, errors.New("not a regular file (a symbolic link)")
		}
		return nil, err
	}
	defer fd.Close()
	fi, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%v)", fi.Mode().Type())
	}
	if err := checkPrivate(fi); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(fd, maxCacheFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxCacheFile {
		return nil, fmt.Errorf("larger than %d bytes", maxCacheFile)
	}
	var f cacheFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("not a cache entry: %v", err)
	}
	if f.Version != cacheVersion {
		return nil, fmt.Errorf("format version %d, not %d", f.Version, cacheVersion)
	}
	return &f, nil
}

// Save writes the entry of key atomically: a private temporary file in
// the directory, synced, then renamed over the old entry.
func (c *tokenCache) Save(_ context.Context, key oauth.StoreKey, e *oauth.StoreEntry) error {
	f := cacheFile{Version: cacheVersion, Resource: key.Resource, Issuer: key.Issuer, Endpoint: c.endpoint,
		AccessToken: e.AccessToken, RefreshToken: e.RefreshToken, Expiry: e.Expiry.UTC().Round(0),
		Scopes: e.Scopes, ClientID: e.ClientID, RedirectURI: e.RedirectURL, Saved: time.Now().UTC().Round(0)}
	if r := e.Registration; r != nil {
		f.Registration = &struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret,omitempty"`
			AuthMethod   string `json:"token_endpoint_auth_method,omitempty"`
		}{r.ID, r.Secret, r.AuthMethod}
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if len(b) > maxCacheFile {
		err := fmt.Errorf("the entry is larger than %d bytes; not saved", maxCacheFile)
		c.warnf("%v", err)
		return err
	}
	if err := writeCacheFile(c.dir, cacheName(key), b); err != nil {
		c.warnf("could not save the login: %v", err)
		return err
	}
	return nil
}

// writeCacheFile writes b to dir/name through a temporary file and a
// rename, in a directory only the user may enter.
func writeCacheFile(dir, name string, b []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// MkdirAll leaves an existing directory as it is: make it private
	// (only the cache's own directory, not its parents).
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*") // mode 0600
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return err
	}
	done = true
	return nil
}

// removeLogins deletes the entries of the cache in dir that were saved
// for endpoint, or whose resource covers it. It returns how many it
// removed. Files it cannot read as entries are left alone.
func removeLogins(dir, endpoint string) (int, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, de := range ents {
		if !de.Type().IsRegular() || !strings.HasSuffix(de.Name(), ".json") {
			continue
		}
		p := filepath.Join(dir, de.Name())
		f, err := readCacheFile(p)
		if err != nil || !(f.Endpoint == endpoint || resourceCovers(f.Resource, endpoint)) {
			continue
		}
		if err := os.Remove(p); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// resourceCovers reports whether endpoint is under resource: the same
// scheme and host, and the resource's path a prefix of the endpoint's on
// a segment boundary (as client/oauth checks protected resource
// metadata).
func resourceCovers(resource, endpoint string) bool {
	r, err1 := url.Parse(resource)
	e, err2 := url.Parse(endpoint)
	if err1 != nil || err2 != nil || r.Host == "" {
		return false
	}
	if !strings.EqualFold(r.Scheme, e.Scheme) || !strings.EqualFold(r.Host, e.Host) {
		return false
	}
	rp := strings.TrimSuffix(r.EscapedPath(), "/")
	ep := strings.TrimSuffix(e.EscapedPath(), "/")
	return rp == "" || ep == rp || strings.HasPrefix(ep, rp+"/")
}
