package oauth_test

import (
	"errors"
	"testing"

	"github.com/mcpfn/mcpfn/client/oauth"
)

// TestResourceMetadataHTTPS: DecodeResourceMetadata checks what its
// documentation promises: an https resource (http only on a loopback host)
// and https authorization servers.
func TestResourceMetadataHTTPS(t *testing.T) {
	t.Parallel()
	for doc, ok := range map[string]bool{
		`{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://as.example.com"]}`:   true,
		`{"resource":"http://127.0.0.1:8080/mcp","authorization_servers":["http://localhost:9000"]}`:      true,
		`{"resource":"http://mcp.example.com/mcp","authorization_servers":["https://as.example.com"]}`:    false,
		`{"resource":"https://mcp.example.com/mcp","authorization_servers":["http://as.example.com"]}`:    false,
		`{"resource":"https://mcp.example.com/mcp","authorization_servers":["as.example.com"]}`:           false,
		`{"resource":"urn:example:mcp","authorization_servers":["https://as.example.com"]}`:               false,
		`{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://as.example.com?x"]}`: false,
	} {
		_, err := oauth.DecodeResourceMetadata([]byte(doc))
		if ok != (err == nil) || !ok && !errors.Is(err, oauth.ErrInsecureURL) {
			t.Errorf("%s: %v", doc, err)
		}
	}
}
