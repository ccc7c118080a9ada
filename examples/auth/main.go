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
// when it would delete everything (auth.RequireScopes: a step-up). The
// draft_note prompt needs notes:write too, and so do the completions of its
// topic argument (they come from the caller's notes). A token without
// notes:write is not shown write_note, purge or draft_note in lists
// (auth.Options.HideUnauthorized).
//
// Notes belong to the principal: issuer, client and subject together. A
// subject is unique only at its issuer, and a token a client obtained for
// itself (client credentials) names no subject, so the key is never the
// subject alone; a token naming neither subject nor client is refused.
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
	"strings"
	"sync"
	"syscall"
	"time"

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

// notes is the server's state: notes by owner.
type notes struct {
	mu sync.Mutex
	m  map[owner][]string
}

// owner is the principal a note belongs to. Two issuers may use the same
// subject for different users, and one user's tokens from two clients are
// told apart by the client, as core binds sessions and request state.
type owner struct{ issuer, client, subject string }

// errNoOwner refuses a caller whose token names neither a subject nor a
// client: every such caller of an issuer would share one set of notes. It
// is a tool error (a result with isError), which the model can report.
var errNoOwner error = &core.ToolError{Message: "this server keeps notes per caller, and the access token names no subject or client"}

// ownerOf returns the owner of the notes of the caller in ctx.
func ownerOf(ctx context.Context) (owner, error) {
	ti := auth.TokenInfoFromContext(ctx)
	if ti == nil || ti.Subject == "" && ti.ClientID == "" {
		return owner{}, errNoOwner
	}
	return owner{ti.Issuer, ti.ClientID, ti.Subject}, nil
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
	rs, err := auth.New(&auth.Options{
		Resource:     cfg.resource,
		MetadataURL:  cfg.metadataURL,
		ResourceName: "Notes",
		Issuers:      issuers,
		Required:     []string{"notes:read"},
		ToolScopes:   map[string][]string{"write_note": {"notes:write"}, "purge": {"notes:write"}},
		PromptScopes: map[string][]string{"draft_note": {"notes:write"}},
		Implies:      map[string][]string{"notes:admin": {"notes:write"}, "notes:write": {"notes:read"}},
		// Advertise the run-time scope too, so clients may ask for it.
		ScopesSupported: []string{"notes:read", "notes:write", "notes:admin"},
		// A read-only token lists no write tools or prompts; calling one
		// still gets the 403 that asks for notes:write.
		HideUnauthorized: true,
		HTTPClient:       cfg.httpClient,
		Logger:           logger,
	})
	if err != nil {
		return nil, err
	}
	n := &notes{m: map[owner][]string{}}
	srv := core.NewServer(core.Implementation{Name: "notes", Version: "1.0.0"},
		&core.ServerOptions{Authenticator: rs, Logger: logger, CompletionHandler: n.complete,
			// The tools change only with a deploy: clients may keep the
			// list a minute. Lists differ per token (HideUnauthorized),
			// so they are cached per credential ("private").
			CacheHints: map[string]core.CacheHint{"tools/list": {TTL: time.Minute}}})
	core.AddTool(srv, &core.Tool{Name: "list_notes", Description: "List your notes."},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) ([]string, error) {
			who, err := ownerOf(ctx)
			if err != nil {
				return nil, err
			}
			n.mu.Lock()
			defer n.mu.Unlock()
			return append([]string{}, n.m[who]...), nil
		})
	core.AddTool(srv, &core.Tool{Name: "write_note", Description: "Write a note."},
		func(ctx context.Context, req *core.CallToolRequest, in writeArgs) (string, error) {
			who, err := ownerOf(ctx)
			if err != nil {
				return "", err
			}
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
			who, err := ownerOf(ctx)
			if err != nil {
				return "", err
			}
			n.mu.Lock()
			defer n.mu.Unlock()
			if in.All {
				users := len(n.m)
				n.m = map[owner][]string{}
				return fmt.Sprintf("deleted the notes of %d users", users), nil
			}
			delete(n.m, who)
			return "deleted your notes", nil
		})
	srv.AddPrompt(&core.Prompt{Name: "draft_note", Description: "Draft a note on a topic.",
		Arguments: []core.PromptArgument{{Name: "topic", Description: "What the note is about (completes from your notes)", Required: true}}},
		func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
			return &core.GetPromptResult{Messages: []core.PromptMessage{{Role: core.RoleUser,
				Content: &core.TextContent{Text: "Draft a short note about " + req.Arguments["topic"] + "."}}}}, nil
		})
	return srv, nil
}

// complete answers completion/complete: draft_note's topic completes from
// the caller's notes. The Resource authorizes it as it does prompts/get of
// draft_note (PromptScopes), before this runs.
func (n *notes) complete(ctx context.Context, req *core.CompleteRequest) (*core.CompleteResult, error) {
	res := &core.CompleteResult{}
	p := req.Params
	if p.Ref.Type != "ref/prompt" || p.Ref.Name != "draft_note" || p.Argument.Name != "topic" {
		return res, nil
	}
	who, err := ownerOf(ctx)
	if err != nil {
		return res, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, note := range n.m[who] {
		if strings.HasPrefix(note, p.Argument.Value) {
			res.Completion.Values = append(res.Completion.Values, note)
		}
	}
	return res, nil
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
