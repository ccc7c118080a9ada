package auth

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
)

// FromEnv returns the protected resource the MCPFN_AUTH_* environment
// variables describe, as the deploy kits (deploy/lambdaenv, deploy/gcfenv)
// and the Terraform modules set them, or nil when MCPFN_AUTH_RESOURCE and
// every other MCPFN_AUTH_* variable are unset:
//
//	MCPFN_AUTH_RESOURCE       the MCP endpoint's URL as clients use it (Options.Resource)
//	MCPFN_AUTH_ISSUER         the authorization server's issuer URL; required with MCPFN_AUTH_RESOURCE
//	MCPFN_AUTH_JWKS_URL       its JWKS URL (Issuer.JWKSURL); default: from its metadata
//	MCPFN_AUTH_SCOPES         space-separated scopes every request needs (Options.Required)
//	MCPFN_AUTH_METADATA_URL   Options.MetadataURL
//	MCPFN_AUTH_METADATA_PATH  Options.MetadataPath
//
// One of the others set without MCPFN_AUTH_RESOURCE is an error, not a
// server left open by a typo. logger is Options.Logger.
func FromEnv(logger *slog.Logger) (*ProtectedResource, error) {
	resource := os.Getenv("MCPFN_AUTH_RESOURCE")
	if resource == "" {
		for _, name := range []string{"MCPFN_AUTH_ISSUER", "MCPFN_AUTH_JWKS_URL", "MCPFN_AUTH_SCOPES", "MCPFN_AUTH_METADATA_URL", "MCPFN_AUTH_METADATA_PATH"} {
			if os.Getenv(name) != "" {
				return nil, fmt.Errorf("%s is set but MCPFN_AUTH_RESOURCE is not: set the MCP endpoint's URL (https://.../mcp) to protect it", name)
			}
		}
		return nil, nil
	}
	issuer := os.Getenv("MCPFN_AUTH_ISSUER")
	if issuer == "" {
		return nil, fmt.Errorf("MCPFN_AUTH_ISSUER: not set, but MCPFN_AUTH_RESOURCE is: name the authorization server (its issuer URL)")
	}
	rs, err := New(&Options{
		Resource:     resource,
		MetadataURL:  os.Getenv("MCPFN_AUTH_METADATA_URL"),
		MetadataPath: os.Getenv("MCPFN_AUTH_METADATA_PATH"),
		Issuers:      []Issuer{{Issuer: issuer, JWKSURL: os.Getenv("MCPFN_AUTH_JWKS_URL")}},
		Required:     strings.Fields(os.Getenv("MCPFN_AUTH_SCOPES")),
		Logger:       logger,
	})
	if err != nil {
		return nil, fmt.Errorf("MCPFN_AUTH_* (MCPFN_AUTH_RESOURCE %q, MCPFN_AUTH_ISSUER %q): %w", resource, issuer, err)
	}
	return rs, nil
}
