package auth

import (
	"fmt"
	"slices"
	"sort"
)

// validScopeToken reports whether s is an RFC 6749 §3.3 scope-token:
// 1*( %x21 / %x23-5B / %x5D-7E ).
func validScopeToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c == 0x22 || c == 0x5c || c > 0x7e {
			return false
		}
	}
	return true
}

// checkScopes validates configured scopes: scope-tokens, never
// offline_access (2026-07-28 basic/authorization §Scope Selection Strategy:
// servers SHOULD NOT put it in challenges or scopes_supported).
func checkScopes(where string, scopes []string) error {
	for _, s := range scopes {
		if !validScopeToken(s) {
			return fmt.Errorf("auth: %s: %q is not a scope-token (RFC 6749 §3.3)", where, s)
		}
		if s == "offline_access" {
			return fmt.Errorf("auth: %s: offline_access is not a resource scope", where)
		}
	}
	return nil
}

// implications is the transitive closure of Options.Implies: for each scope,
// every scope it implies (directly or through others), itself excluded.
type implications map[string][]string

func closeImplies(direct map[string][]string) (implications, error) {
	for k, v := range direct {
		if err := checkScopes("Implies", append([]string{k}, v...)); err != nil {
			return nil, err
		}
	}
	out := implications{}
	for k := range direct {
		seen := map[string]bool{k: true}
		stack := append([]string(nil), direct[k]...)
		var all []string
		for len(stack) > 0 {
			s := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[s] {
				continue
			}
			seen[s] = true
			all = append(all, s)
			stack = append(stack, direct[s]...)
		}
		sort.Strings(all)
		out[k] = all
	}
	return out, nil
}

// expand returns granted plus every scope it implies, deduplicated, in the
// order granted first.
func (im implications) expand(granted []string) []string {
	if len(im) == 0 {
		return granted
	}
	extra := false
	for _, g := range granted {
		if len(im[g]) > 0 {
			extra = true
			break
		}
	}
	if !extra {
		return granted
	}
	seen := make(map[string]bool, len(granted)*2)
	out := make([]string, 0, len(granted)*2)
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, g := range granted {
		add(g)
	}
	for _, g := range granted {
		for _, s := range im[g] {
			add(s)
		}
	}
	return out
}

// hasAll reports whether have (already expanded) holds every scope of need.
func hasAll(have, need []string) bool {
	for _, n := range need {
		if !slices.Contains(have, n) {
			return false
		}
	}
	return true
}

// union appends the scopes of b missing from a to a copy of a.
func union(a []string, b ...[]string) []string {
	out := append([]string(nil), a...)
	for _, l := range b {
		for _, s := range l {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}
