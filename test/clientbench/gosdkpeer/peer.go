// Package gosdkpeer is a go-sdk v1.8.0 MCP server (stateless, so it serves
// 2026-07-28) that package client and the mcpfn CLI are tested against:
//
//   - every principal gets the tool "where", whose inputSchema declares
//     x-mcp-header Region (string) and Level (integer); go-sdk validates
//     the Mcp-Param-* headers against the body (-32020);
//   - behind go-sdk's auth.RequireBearerToken, the tokens "alice" and
//     "bob" see a tool of their own (alice_tool, bob_tool), and tools/list
//     is private with a ttlMs of one minute (SetCacheable), so a client
//     that caches it across credentials shows it;
//   - Stats records what reached the server: each tools/call's Mcp-Param-*
//     headers (as sent, before go-sdk validates them) and the tools/list
//     and tools/call requests per token.
package gosdkpeer

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Seen is what reached a peer.
type Seen struct {
	// Calls are the Mcp-Param-* headers of each tools/call, in order.
	Calls []map[string]string `json:"calls"`
	// Lists counts tools/list requests per token ("" for none).
	Lists map[string]int `json:"lists"`
}

// Stats records what reaches a peer. Safe for concurrent use.
type Stats struct {
	mu   sync.Mutex
	seen Seen
}

// Snapshot returns a copy of what reached the peer so far.
func (s *Stats) Snapshot() Seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Seen{Calls: []map[string]string{}, Lists: map[string]int{}}
	for _, c := range s.seen.Calls {
		m := map[string]string{}
		for k, v := range c {
			m[k] = v
		}
		out.Calls = append(out.Calls, m)
	}
	for k, v := range s.seen.Lists {
		out.Lists[k] = v
	}
	return out
}

func (s *Stats) record(r *http.Request, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch r.Header.Get("Mcp-Method") {
	case "tools/call":
		m := map[string]string{}
		for k, vs := range r.Header {
			if strings.HasPrefix(k, "Mcp-Param-") {
				m[k] = strings.Join(vs, ",")
			}
		}
		s.seen.Calls = append(s.seen.Calls, m)
	case "tools/list":
		if s.seen.Lists == nil {
			s.seen.Lists = map[string]int{}
		}
		s.seen.Lists[token]++
	}
}

// Users are the tokens the peer accepts and the tool each one sees.
var Users = map[string]string{"alice": "alice_tool", "bob": "bob_tool"}

type whereIn struct {
	Region string `json:"region"`
	Level  int    `json:"level,omitempty"`
}

var whereSchema = json.RawMessage(`{"type":"object","properties":{
	"region":{"type":"string","x-mcp-header":"Region"},
	"level":{"type":"integer","x-mcp-header":"Level"}}}`)

func newServer(user string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdkpeer", Version: "1"}, &mcp.ServerOptions{
		SetCacheable: func(ctx context.Context, req mcp.Request, c *mcp.Cacheable) {
			if _, ok := req.(*mcp.ListToolsRequest); ok {
				c.TTLMs, c.CacheScope = 60_000, "private"
			}
		},
	})
	mcp.AddTool(s, &mcp.Tool{Name: "where", InputSchema: whereSchema}, func(ctx context.Context, req *mcp.CallToolRequest, in whereIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("region=%s level=%d", in.Region, in.Level)}}}, nil, nil
	})
	if tool, ok := Users[user]; ok {
		mcp.AddTool(s, &mcp.Tool{Name: tool}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: tool}}}, nil, nil
		})
	}
	return s
}

// Handler returns the peer: MCP on every path, behind go-sdk's bearer
// token middleware, with its Stats.
func Handler() (http.Handler, *Stats) {
	st := &Stats{}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		user := ""
		if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
			user = ti.UserID
		}
		return newServer(user)
	}, &mcp.StreamableHTTPOptions{Stateless: true})
	verify := func(ctx context.Context, tok string, r *http.Request) (*auth.TokenInfo, error) {
		if _, ok := Users[tok]; !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: tok, Expiration: time.Now().Add(time.Hour)}, nil
	}
	protected := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: "http://127.0.0.1/.well-known/oauth-protected-resource"})(mcpHandler)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if r.Method == http.MethodPost {
			st.record(r, token)
		}
		protected.ServeHTTP(w, r)
	}), st
}
