package core

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// manyKeys returns an object with n distinct keys in reverse order.
func manyKeys(n int) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := n - 1; i >= 0; i-- {
		if i < n-1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%07d":"v"`, i)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// TestCheckArguments covers the limits and the duplicate-key rule.
func TestCheckArguments(t *testing.T) {
	nested := func(n int) string { return strings.Repeat(`{"a":`, n-1) + "{}" + strings.Repeat("}", n-1) }
	for in, want := range map[string]string{
		`{"a":1,"b":{"c":[{"d":1,"e":2}]}}`:                                   "",
		`{"region":"us","REGION":"eu"}`:                                       "",
		`{"a":1,"a":2}`:                                                       `duplicate key "a"`,
		`{"a":1,"\u0061":2}`:                                                  `duplicate key "a"`,
		`{"x":[{"a":1,"b":2,"a":3}]}`:                                         `duplicate key "a"`,
		string(manyKeys(MaxArgumentMembers)):                                  "",
		string(manyKeys(MaxArgumentMembers + 1)):                              "more than 10000 members",
		`{"a":1,` + string(manyKeys(100)[1:len(manyKeys(100))-1]) + `,"a":2}`: `duplicate key "a"`,
		nested(MaxArgumentDepth):                                              "",
		nested(MaxArgumentDepth + 1):                                          "nested deeper than 32 levels",
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
