package mcpfnenv_test

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/deploy/mcpfnenv"
)

func TestAllowedOrigins(t *testing.T) {
	for _, c := range []struct {
		v    string
		want []string
		err  string
	}{
		{"", nil, ""},
		{" https://a.example , ,http://localhost:3000/ ", []string{"https://a.example", "http://localhost:3000"}, ""},
		{"*", []string{"*"}, ""},
		{"ftp://a.example", nil, `"ftp://a.example" is not an origin`},
		{"https://a.example/path", nil, "is not an origin"},
		{"https://user@a.example", nil, "is not an origin"},
		{"https://a.example?q=1", nil, "is not an origin"},
		{"a.example", nil, "is not an origin"},
	} {
		t.Setenv("MCPFN_ALLOWED_ORIGINS", c.v)
		got, err := mcpfnenv.AllowedOrigins()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "MCPFN_ALLOWED_ORIGINS: ") {
				t.Errorf("%q: %v, want an error naming the variable and %q", c.v, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, %v; want %q", c.v, got, err, c.want)
		}
	}
}

func TestStateKeys(t *testing.T) {
	k1 := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("a", 32)))
	k2 := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("b", 48)))
	t.Setenv("MCPFN_STATE_KEY", " "+k1+" , "+k2)
	keys, err := mcpfnenv.StateKeys()
	if err != nil || len(keys) != 2 {
		t.Fatalf("two keys: %v, %v", keys, err)
	}
	if string(keys[0].Secret) != strings.Repeat("a", 32) || len(keys[1].Secret) != 48 ||
		!strings.HasPrefix(keys[0].ID, "env-") || keys[0].ID == keys[1].ID {
		t.Errorf("keys %+v", keys)
	}
	// The id depends on the key alone: the same key, listed second, keeps it.
	t.Setenv("MCPFN_STATE_KEY", k2+","+k1)
	again, err := mcpfnenv.StateKeys()
	if err != nil || again[1].ID != keys[0].ID {
		t.Errorf("ids moved with the order: %v then %v (%v)", keys, again, err)
	}
	for v, want := range map[string]string{
		"":               "",
		"not base64!":    "key 1 is not standard base64",
		k1 + ",c2hvcnQ=": "key 2 has 5 bytes",
		k1 + "," + k1:    "key 2 is listed twice",
		"   ":            "",
	} {
		t.Setenv("MCPFN_STATE_KEY", v)
		keys, err := mcpfnenv.StateKeys()
		switch {
		case want == "" && (err != nil || keys != nil):
			t.Errorf("%q: %v, %v; want no keys", v, keys, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: %v; want an error with %q", v, err, want)
		}
	}
}

func TestBoolAndDuration(t *testing.T) {
	for v, want := range map[string]bool{"": false, "1": true, "true": true, "0": false, "FALSE": false} {
		t.Setenv("X_BOOL", v)
		if got, err := mcpfnenv.Bool("X_BOOL"); err != nil || got != want {
			t.Errorf("Bool %q: %v %v", v, got, err)
		}
	}
	t.Setenv("X_BOOL", "yes")
	if _, err := mcpfnenv.Bool("X_BOOL"); err == nil || !strings.HasPrefix(err.Error(), "X_BOOL: ") {
		t.Errorf("Bool yes: %v", err)
	}
	for v, want := range map[string]time.Duration{"": 0, "300": 300 * time.Second, "90s": 90 * time.Second, "5m": 5 * time.Minute} {
		t.Setenv("X_DUR", v)
		if got, err := mcpfnenv.Duration("X_DUR"); err != nil || got != want {
			t.Errorf("Duration %q: %v %v", v, got, err)
		}
	}
	for _, v := range []string{"0", "-5s", "soon", "1.5"} {
		t.Setenv("X_DUR", v)
		if _, err := mcpfnenv.Duration("X_DUR"); err == nil || !strings.HasPrefix(err.Error(), "X_DUR: ") {
			t.Errorf("Duration %q: %v, want an error naming the variable", v, err)
		}
	}
}
