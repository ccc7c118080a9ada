package authtest

import (
	"context"
	"crypto"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"time"
)

// Client is a client registered with the server by AddClient.
type Client struct {
	// ID is the client_id.
	ID string
	// Secret authenticates a client_secret_basic or client_secret_post
	// client.
	Secret string
	// AuthMethod is the token endpoint authentication method the client
	// must use: none, client_secret_basic, client_secret_post or
	// private_key_jwt. "" means private_key_jwt when Key is set,
	// client_secret_basic when Secret is, and none otherwise.
	AuthMethod string
	// Key verifies the private_key_jwt client assertions (RFC 7523 §2.2):
	// an *ecdsa.PublicKey (ES256/384/512 by curve) or an *rsa.PublicKey
	// (RS256).
	Key crypto.PublicKey
	// RedirectURIs are the redirect URIs the authorization endpoint
	// accepts for the client.
	RedirectURIs []string
	// IDJAGClientIDs maps an authorization server's issuer to this
	// client's client_id there: the client_id claim of the ID-JAGs the
	// token exchange issues for that audience. An audience it does not
	// map gets ID.
	IDJAGClientIDs map[string]string
}

// AddClient registers c, replacing a client with the same id.
func (s *Server) AddClient(c Client) {
	m := c.AuthMethod
	switch {
	case m != "":
	case c.Key != nil:
		m = "private_key_jwt"
	case c.Secret != "":
		m = "client_secret_basic"
	default:
		m = "none"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[c.ID] = &client{redirects: slices.Clone(c.RedirectURIs), method: m, secret: c.Secret, key: c.Key, idjag: maps.Clone(c.IDJAGClientIDs)}
}

// RegisterClient registers a public client with redirect URIs and returns
// its id (as /register would).
func (s *Server) RegisterClient(redirectURIs ...string) string {
	id := "client-" + randomString(6)
	s.AddClient(Client{ID: id, RedirectURIs: redirectURIs})
	return id
}

// lookupClient returns the registered client id, or, with
// ClientIDMetadataDocuments, the client its metadata document describes.
func (s *Server) lookupClient(ctx context.Context, id string) (*client, bool) {
	s.mu.Lock()
	c, ok := s.clients[id]
	s.mu.Unlock()
	if ok || !s.opts.ClientIDMetadataDocuments || !metadataDocumentURL(id) {
		return c, ok
	}
	return s.fetchClientMetadata(ctx, id)
}

// metadataDocumentURL reports whether id has the form of a Client ID
// Metadata Document URL: https with a path, or http on a loopback host; no
// fragment.
func metadataDocumentURL(id string) bool {
	u, err := url.Parse(id)
	if err != nil || u.Fragment != "" || u.Path == "" || u.Path == "/" {
		return false
	}
	switch u.Scheme {
	case "https":
		return u.Host != ""
	case "http":
		h := u.Hostname()
		ip := net.ParseIP(h)
		return h == "localhost" || ip != nil && ip.IsLoopback()
	}
	return false
}

// fetchClientMetadata fetches the Client ID Metadata Document at id: a
// public client whose redirect URIs the document lists.
func (s *Server) fetchClientMetadata(ctx context.Context, id string) (*client, bool) {
	hc := http.Client{}
	if s.opts.HTTPClient != nil {
		hc = *s.opts.HTTPClient
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return nil, false
	}
	req.Header.Set("Accept", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return nil, false
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, false
	}
	var doc struct {
		ClientID     string   `json:"client_id"`
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&doc); err != nil || doc.ClientID != id {
		return nil, false
	}
	if doc.AuthMethod != "" && doc.AuthMethod != "none" {
		return nil, false // only public clients here
	}
	return &client{redirects: doc.RedirectURIs, method: "none"}, true
}

// register implements RFC 7591: the client gets the token endpoint
// authentication method it asks for when the server supports it (the
// first supported one otherwise; client_secret_basic by default, §2), and a
// secret unless that is none.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var md map[string]any
	err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&md)
	s.record(EndpointRegistration, r, md)
	if err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "bad JSON")
		return
	}
	var uris []string
	if l, ok := md["redirect_uris"].([]any); ok {
		for _, u := range l {
			if s, ok := u.(string); ok {
				uris = append(uris, s)
			}
		}
	}
	if len(uris) == 0 {
		oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", "redirect_uris is required")
		return
	}
	method, _ := md["token_endpoint_auth_method"].(string)
	if method == "" {
		method = "client_secret_basic"
	}
	if !slices.Contains(s.opts.AuthMethods, method) || method == "private_key_jwt" {
		method = "none"
		for _, m := range s.opts.AuthMethods {
			if m != "private_key_jwt" {
				method = m
				break
			}
		}
	}
	c := Client{ID: "dcr-" + randomString(9), AuthMethod: method, RedirectURIs: uris}
	if method != "none" {
		c.Secret = randomString(18)
	}
	s.AddClient(c)
	md["client_id"] = c.ID
	md["client_id_issued_at"] = time.Now().Unix()
	md["token_endpoint_auth_method"] = method
	if c.Secret != "" {
		md["client_secret"] = c.Secret
		md["client_secret_expires_at"] = 0
	}
	writeJSON(w, http.StatusCreated, md)
}
