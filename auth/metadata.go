package auth

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpfn/mcpfn/core"
)

func newResourceEntry(uri, metadataURL, metadataPath string) (*resourceEntry, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" || u.Fragment != "" || strings.Contains(uri, "#") || u.User != nil || !secureOrLoopback(u) {
		return nil, fmt.Errorf("auth: resource %q must be an absolute https URI without fragment (http only on loopback)", uri)
	}
	if u.Scheme != strings.ToLower(u.Scheme) || u.Host != strings.ToLower(u.Host) {
		return nil, fmt.Errorf("auth: resource %q is not canonical: lower-case its scheme and host", uri)
	}
	e := &resourceEntry{uri: uri, host: u.Host}
	e.htu, _ = normalURL(uri) // parsed above: always ok
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	wk := MetadataPathPrefix + path
	e.docPaths = []string{wk}
	e.metaURL = u.Scheme + "://" + u.Host + wk
	if metadataURL != "" {
		mu, err := url.Parse(metadataURL)
		if err != nil || mu.Host == "" || mu.Fragment != "" || !secureOrLoopback(mu) {
			return nil, fmt.Errorf("auth: MetadataURL %q must be an absolute https URL", metadataURL)
		}
		e.metaURL = metadataURL
		p := mu.EscapedPath()
		if metadataPath != "" {
			p = metadataPath
		}
		if p != wk {
			e.docPaths = append(e.docPaths, p)
		}
	}
	return e, nil
}

// MetadataURL returns the URL of the protected resource metadata document
// for the first resource, as challenges name it.
func (rs *ProtectedResource) MetadataURL() string { return rs.resources[0].metaURL }

// pick returns the resource a request is for: the only one, or the one whose
// host matches r.Host.
func (rs *ProtectedResource) pick(r *http.Request) *resourceEntry {
	if len(rs.resources) == 1 {
		return rs.resources[0]
	}
	for _, e := range rs.resources {
		if strings.EqualFold(e.host, r.Host) {
			return e
		}
	}
	return nil
}

var errMisdirected = (&core.Error{Code: core.CodeInvalidRequest, Message: "Misdirected Request: unknown host"}).
	WithHTTP(http.StatusMisdirectedRequest, nil)

// Metadata implements [core.Authenticator]: the RFC 9728 document at the
// well-known path derived from the resource, and at MetadataURL's path.
func (rs *ProtectedResource) Metadata(r *http.Request) ([]byte, error) {
	p := r.URL.EscapedPath()
	if !strings.HasPrefix(p, MetadataPathPrefix) && !rs.hasExtraPath(p) {
		return nil, nil
	}
	e := rs.pick(r)
	if e == nil {
		return nil, errMisdirected
	}
	for _, dp := range e.docPaths {
		if p == dp {
			return e.doc, nil
		}
	}
	if strings.HasPrefix(p, MetadataPathPrefix) {
		return nil, (&core.Error{Code: core.CodeInvalidRequest, Message: "Not Found: no such metadata document"}).
			WithHTTP(http.StatusNotFound, nil)
	}
	return nil, nil
}

func (rs *ProtectedResource) hasExtraPath(p string) bool {
	for _, e := range rs.resources {
		for _, dp := range e.docPaths[1:] {
			if p == dp {
				return true
			}
		}
	}
	return false
}
