package oauth

import (
	"context"
	"slices"
	"time"
)

// Store keeps what a Source obtained beyond the life of the Source: its
// tokens and its dynamic client registration, so that a later process
// reuses them instead of sending the user through the browser again. Set
// it in Config.Store; a library user may keep entries anywhere (a file, a
// keychain). The Source calls it under its own lock: one Load and any
// number of Saves for a key, never concurrently for one Source.
//
// An entry holds bearer credentials: a Store must keep it where only the
// user can read it.
type Store interface {
	// Load returns the entry saved under key, or nil (and no error) when
	// there is none. The Source treats an error as no entry: a Store
	// reports its own failures (a corrupt file, say) where it sees fit.
	Load(ctx context.Context, key StoreKey) (*StoreEntry, error)
	// Save replaces the entry under key. The Source ignores its error:
	// the tokens in memory stay valid, only the next process logs in
	// again.
	Save(ctx context.Context, key StoreKey, e *StoreEntry) error
}

// StoreKey names an entry: tokens are issued for one protected resource
// by one authorization server (the audience of the RFC 8707 resource
// indicator; 2025-11-25 basic/authorization §Token Audience Binding), and
// the client registration belongs to that server alone.
type StoreKey struct {
	// Resource is the protected resource's identifier, the resource of
	// its RFC 9728 metadata (the MCP server's canonical URI).
	Resource string
	// Issuer is the authorization server's issuer identifier.
	Issuer string
}

// StoreEntry is what a Store keeps under a StoreKey.
type StoreEntry struct {
	AccessToken  string
	RefreshToken string    // "" when the server issued none
	Expiry       time.Time // the access token's; zero when unknown
	// Scopes are the scopes the tokens were requested with: a later
	// challenge for scopes outside them authorizes again (step-up).
	Scopes []string
	// ClientID is the client the tokens were issued to. The Source uses
	// the tokens only with that client: a refresh token is bound to it
	// (RFC 6749 §6).
	ClientID string
	// Registration is the client from dynamic registration (RFC 7591),
	// secret included, whose Issuer is the key's; nil when the client is
	// pre-registered (Config.Clients) or a Client ID Metadata Document
	// URL, which the Source knows already.
	Registration *Client
	// RedirectURL is the redirect URI Registration was registered with. A
	// new authorization code flow reuses Registration only when
	// Config.RedirectURL is the same, since an authorization server may
	// compare redirect URIs exactly, port included (a loopback listener
	// gets a new port in each process, RFC 8252 §7.3); it registers
	// again otherwise. Refreshing needs no redirect URI and always uses
	// Registration.
	RedirectURL string
	// DPoPJKT is, for DPoP-bound tokens (RFC 9449), the RFC 7638
	// thumbprint of the key they are bound to; "" for Bearer tokens. The
	// Source uses saved DPoP-bound tokens only when its own key
	// (Config.DPoPKey) has that thumbprint.
	DPoPJKT string
}

// load seeds the Source, once per key, with the entry Config.Store has
// for it: the dynamic registration, and the tokens when nothing newer is
// in memory and they were issued to the client this Source uses with the
// issuer. It reports whether it seeded tokens.
func (s *Source) load(ctx context.Context, key StoreKey, meta *ServerMetadata) bool {
	st := s.cfg.Store
	s.mu.Lock()
	if st == nil || s.loaded == key {
		s.mu.Unlock()
		return false
	}
	s.loaded = key
	s.mu.Unlock()
	e, err := st.Load(ctx, key)
	if err != nil || e == nil {
		return false
	}
	var reg *Client
	if r := e.Registration; r != nil && r.ID != "" && r.Issuer == key.Issuer && r.Key == nil {
		c := *r
		reg = &c
	}
	// The client the tokens would be used with: pre-registered first, as
	// clientFor chooses it.
	want := ""
	if c, ok, err := s.preRegistered(meta); err != nil {
		return false
	} else if ok {
		want = c.ID
	} else if meta.ClientIDMetadataDocumentSupported && s.cfg.ClientMetadataURL != "" {
		want = s.cfg.ClientMetadataURL
	} else if reg != nil {
		want = reg.ID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if reg != nil {
		if _, ok := s.registered[key.Issuer]; !ok {
			s.registered[key.Issuer] = *reg
			s.redirects[key.Issuer] = e.RedirectURL
		}
	}
	if s.tok != nil || e.AccessToken == "" || want == "" || e.ClientID != want || len(e.Scopes) > MaxScopes {
		return false
	}
	if e.DPoPJKT != "" {
		// Bound to a key: of use only with that key (RFC 9449 §7).
		if s.cfg.DPoP == DPoPOff || s.dpop.init() != nil || s.dpop.jkt != e.DPoPJKT {
			return false
		}
	}
	s.tok = &token{access: e.AccessToken, refresh: e.RefreshToken, expiry: e.Expiry, dpop: e.DPoPJKT != ""}
	s.scopes = slices.Clone(e.Scopes)
	return true
}

// save hands the current tokens, and the dynamic registration of client
// c, to Config.Store. Called under s.flow, so saves of one Source are in
// order.
func (s *Source) save(ctx context.Context, c Client) {
	st := s.cfg.Store
	if st == nil {
		return
	}
	s.mu.Lock()
	key := StoreKey{Resource: s.resource, Issuer: s.issuer}
	t := s.tok
	e := &StoreEntry{Scopes: slices.Clone(s.scopes), ClientID: c.ID}
	if r, ok := s.registered[s.issuer]; ok && r.ID == c.ID {
		e.Registration = &r
		e.RedirectURL = s.redirects[s.issuer]
	}
	s.loaded = key // what is saved needs no loading
	s.mu.Unlock()
	if t == nil || key.Resource == "" || key.Issuer == "" {
		return
	}
	e.AccessToken, e.RefreshToken, e.Expiry = t.access, t.refresh, t.expiry
	if t.dpop {
		e.DPoPJKT = s.dpop.jkt
	}
	_ = st.Save(ctx, key, e)
}
