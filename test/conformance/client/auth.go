package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/client/oauth"
)

// cimdURL is the Client ID Metadata Document URL the suite's authorization
// servers accept as client_id (auth/basic-cimd).
const cimdURL = "https://conformance-test.local/client-metadata.json"

// authContext is what authorization scenarios put in MCP_CONFORMANCE_CONTEXT.
type authContext struct {
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
	IdPClientID      string `json:"idp_client_id"`
	IdPIDToken       string `json:"idp_id_token"`
	IdPTokenEndpoint string `json:"idp_token_endpoint"`
	// ValidJWT is the workload's identity token of auth/wif-jwt-bearer
	// (SEP-1933), as a cloud platform would mount it.
	ValidJWT string `json:"valid_jwt"`
}

// tokenSource returns the token source for an authorization scenario
// ("auth/..."), built from the scenario's context (sc.Raw holds the whole
// MCP_CONFORMANCE_CONTEXT: client credentials, keys, assertions). It is the
// one place the OAuth client is wired into the conformance client.
//
// The suite's authorization servers approve at once, so the user-agent step
// is oauth.Headless: a GET of the authorization URL whose redirect is read,
// not followed. Credentials in the context are pre-registered with the
// scenario's (only) authorization server; the context does not name its
// issuer, so they are bound to whichever loopback issuer the flow asks for.
// cleanup removes what the token source needed on disk; call it when the
// scenario is over.
func tokenSource(ctx context.Context, scenario, endpoint string, sc *scenarioContext) (ts client.TokenSource, cleanup func(), err error) {
	cleanup = func() {}
	var ac authContext
	if len(sc.Raw) > 0 {
		if err := json.Unmarshal(sc.Raw, &ac); err != nil {
			return nil, cleanup, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	cfg := oauth.Config{
		RedirectURL:       "http://127.0.0.1:3000/callback",
		Authorize:         oauth.Headless(nil),
		ClientMetadataURL: cimdURL,
		ClientName:        "mcpfn-conformance-client",
	}
	if ac.ClientID != "" {
		cl := oauth.Client{ID: ac.ClientID, Secret: ac.ClientSecret}
		if ac.PrivateKeyPEM != "" {
			key, err := oauth.ParsePrivateKeyPEM([]byte(ac.PrivateKeyPEM))
			if err != nil {
				return nil, cleanup, err
			}
			cl.Key, cl.AuthMethod = key, oauth.AuthPrivateKeyJWT
		}
		// The context does not name the issuer; the scenario's one
		// authorization server runs on loopback beside it. Bind the
		// credentials to the issuer asked for only when it is there, so
		// that they never go to a server elsewhere (oauth.Client.Issuer).
		cfg.Clients = func(issuer string) (oauth.Client, bool) {
			u, err := url.Parse(issuer)
			if err != nil || (u.Hostname() != "localhost" && u.Hostname() != "127.0.0.1" && u.Hostname() != "::1") {
				return oauth.Client{}, false
			}
			c := cl
			c.Issuer = issuer
			return c, true
		}
	}
	switch scenario {
	case "auth/client-credentials-basic", "auth/client-credentials-jwt":
		cfg.Grant = oauth.GrantClientCredentials
	case "auth/enterprise-managed-authorization":
		cfg.Grant = oauth.GrantJWTBearer
		idToken := ac.IdPIDToken
		cfg.Assertion = oauth.IDJAG(oauth.IdP{
			TokenEndpoint: ac.IdPTokenEndpoint,
			ClientID:      ac.IdPClientID,
			IDToken:       func(context.Context) (string, error) { return idToken, nil },
		})
	case "auth/wif-jwt-bearer":
		// Workload identity federation (SEP-1933): the workload's JWT,
		// read from a file as a platform mounts it, is the RFC 7523
		// assertion.
		dir, err := os.MkdirTemp("", "wif-")
		if err != nil {
			return nil, cleanup, err
		}
		cleanup = func() { os.RemoveAll(dir) }
		path := filepath.Join(dir, "token")
		if err := os.WriteFile(path, []byte(ac.ValidJWT+"\n"), 0o600); err != nil {
			return nil, cleanup, err
		}
		cfg.Grant = oauth.GrantJWTBearer
		cfg.Assertion = oauth.AssertionFile(path)
	}
	return oauth.New(&cfg), cleanup, nil
}
