package core

import (
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/internal/testseeds"
)

// TestCheckArguments covers the limits and the duplicate-key rule.
func TestCheckArguments(t *testing.T) {
	t.Parallel()
	nested := func(n int) string { return strings.Repeat(`{"a":`, n-1) + "{}" + strings.Repeat("}", n-1) }
	for in, want := range map[string]string{
		`{"a":1,"b":{"c":[{"d":1,"e":2}]}}`:                "",
		`{"region":"us","REGION":"eu"}`:                    "",
		`{"a":1,"a":2}`:                                    `duplicate key "a"`,
		`{"a":1,"\u0061":2}`:                               `duplicate key "a"`,
		`{"x":[{"a":1,"b":2,"a":3}]}`:                      `duplicate key "a"`,
		string(testseeds.ManyKeys(MaxArgumentMembers)):     "",
		string(testseeds.ManyKeys(MaxArgumentMembers + 1)): "more than 10000 members",
		`{"a":1,` + string(testseeds.ManyKeys(100)[1:len(testseeds.ManyKeys(100))-1]) + `,"a":2}`: `duplicate key "a"`,
		nested(MaxArgumentDepth):     "",
		nested(MaxArgumentDepth + 1): "nested deeper than 32 levels",
	} {
		err := checkArguments("arguments", []byte(in))
		switch {
		case want == "" && err != nil:
			t.Errorf("%.40s: %v", in, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%.40s: err %v, want %q", in, err, want)
		case err != nil && err.(*Error).Code != CodeInvalidParams:
			t.Errorf("%.40s: code %d", in, err.(*Error).Code)
		}
	}
}
