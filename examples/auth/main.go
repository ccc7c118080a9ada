// Command auth serves a notes server as an OAuth 2.1 protected resource
// (2026-07-28 basic/authorization) on net/http, trusting two authorization
// servers: one issuing JWT access tokens (verified against its JWKS), one
// whose tokens are introspected (RFC 7662).
//
//	go run ./examples/auth \
//	    -resource https://mcp.example.com/mcp \
//	    -jwt-issuer https://login.example.com \
//	    -introspection-issuer https://idp.example.com \
//	    -introspection-endpoint https://idp.example.com/oauth2/introspect \
//	    -introspection-client-id mcp-resource
//	# and the client secret in MCPFN_INTROSPECTION_SECRET
//
// Scopes: every request needs notes:read; write_note needs notes:write
// (notes:admin implies it); purge asks for notes:admin at run time, and only
// when it would delete everything (auth.RequireScopes: a step-up).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"sync"
	"syscall"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/core"
)

// config is what main reads from flags and the environment.
type config struct {
	addr                                         string
	resource, metadataURL                        string
	jwtIssuer, jwksURL                           string
	introIssuer, introEndpoint, introID, introSK string
	httpClient                                   *http.Client
}

// notes is the server's state: notes by author.
type notes struct {
	mu sync.Mutex
	m  map[string][]string
}

type writeArgs struct {
	Text string `json:"text" jsonschema:"description=The note"`
}

type purgeArgs struct {
	All bool `json:"all,omitempty" jsonschema:"description=Delete every user's notes (needs notes:admin)"`
}

// newServer builds the protected server.
func newServer(cfg config, logger *slog.Logger) (*core.Server, error) {
	var issuers []auth.Issuer
	if cfg.jwtIssuer != "" {
		issuers = append(issuers, auth.Issuer{Issuer: cfg.jwtIssuer, JWKSURL: cfg.jwksURL})
	}
	if cfg.introIssuer != "" {
		issuers = append(issuers, auth.Issuer{Issuer: cfg.introIssuer, Introspection: &auth.Introspection{
			Endpoint: cfg.introEndpoint, ClientID: cfg.introID, ClientSecret: cfg.introSK}})
	}
	rs, err := auth.New(auth.Options{
		Resource:     cfg.resource,
		MetadataURL:  cfg.metadataURL,
		ResourceName: "Notes",
		Issuers:      issuers,
		Required:     []string{"notes:read"},
		ToolScopes:   map[string][]string{"write_note": {"notes:write"}, "purge": {"notes:write"}},
		Implies:      map[string][]string{"notes:admin": {"notes:write"}, "notes:write": {"notes:read"}},
		// Advertise the run-time scope too, so clients may ask for it.
		ScopesSupported: []string{"notes:read", "notes:write", "notes:admin"},
		HTTPClient:      cfg.httpClient,
		Logger:          logger,
	})
	if err != nil {
		return nil, err
	}
	srv := core.NewServer(core.Implementation{Name: "notes", Version: "1.0.0"},
		&core.ServerOptions{Authenticator: rs, Logger: logger})
	n := &notes{m: map[string][]string{}}
	core.AddTool(srv, &core.Tool{Name: "list_notes", Description: "List your notes."},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) ([]string, error) {
			who := auth.TokenInfoFromContext(ctx).Subject
			n.mu.Lock()
			defer n.mu.Unlock()
			return append([]string{}, n.m[who]...), nil
		})
	core.AddTool(srv, &core.Tool{Name: "write_note", Description: "Write a note."},
		func(ctx context.Context, req *core.CallToolRequest, in writeArgs) (string, error) {
			who := auth.TokenInfoFromContext(ctx).Subject
			n.mu.Lock()
			defer n.mu.Unlock()
			n.m[who] = append(n.m[who], in.Text)
			return fmt.Sprintf("%d notes", len(n.m[who])), nil
		})
	core.AddTool(srv, &core.Tool{Name: "purge", Description: "Delete your notes, or everyone's."},
		func(ctx context.Context, req *core.CallToolRequest, in purgeArgs) (string, error) {
			if in.All {
				// Run-time step-up: the 403 asks the client to obtain
				// notes:admin and retry.
				if err := auth.RequireScopes(ctx, "notes:admin"); err != nil {
					return "", err
				}
			}
			who := auth.TokenInfoFromContext(ctx).Subject
			n.mu.Lock()
			defer n.mu.Unlock()
			if in.All {
				users := make([]string, 0, len(n.m))
				for u := range n.m {
					users = append(users, u)
				}
				sort.Strings(users)
				n.m = map[string][]string{}
				return fmt.Sprintf("deleted the notes of %d users", len(users)), nil
			}
			delete(n.m, who)
			return "deleted your notes", nil
		})
	return srv, nil
}

// serve runs the server on ln until ctx ends.
func serve(ctx context.Context, cfg config, ln net.Listener, logger *slog.Logger) error {
	srv, err := newServer(cfg, logger)
	if err != nil {
		return err
	}
	return nethttp.ServeListener(ctx, ln, srv, nil)
}

func main() {
	var cfg config
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "listen address")
	flag.StringVar(&cfg.resource, "resource", "http://127.0.0.1:8080/mcp", "canonical URI of the MCP endpoint as clients use it")
	flag.StringVar(&cfg.metadataURL, "metadata-url", "", "public URL of the metadata document, when not the well-known URL of -resource (stage prefixes)")
	flag.StringVar(&cfg.jwtIssuer, "jwt-issuer", "", "issuer of JWT access tokens")
	flag.StringVar(&cfg.jwksURL, "jwks-url", "", "its jwks_uri (default: from its metadata)")
	flag.StringVar(&cfg.introIssuer, "introspection-issuer", "", "issuer whose tokens are introspected")
	flag.StringVar(&cfg.introEndpoint, "introspection-endpoint", "", "its introspection endpoint")
	flag.StringVar(&cfg.introID, "introspection-client-id", "", "client id of this server at the introspection endpoint")
	flag.Parse()
	cfg.introSK = os.Getenv("MCPFN_INTROSPECTION_SECRET")
	if cfg.jwtIssuer == "" && cfg.introIssuer == "" {
		log.Fatal("auth: set -jwt-issuer or -introspection-issuer")
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log.Printf("auth: serving MCP on http://%s/mcp as %s", ln.Addr(), cfg.resource)
	if err := serve(ctx, cfg, ln, logger); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
