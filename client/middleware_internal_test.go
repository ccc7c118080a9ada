package client

import (
	"encoding/json"
	"testing"
)

var isErrorSeeds = []string{
	`{"content":[],"isError":true}`,
	`{"isError":false}`,
	`{ "isError" : true , "content" : [ {"type":"text","text":"\"isError\":true"} ] }`,
	`{"structuredContent":{"isError":true},"isError":false}`,
	`{"isError":true,"isError":false}`,
	`{"isError":true,"isError":null}`,
	`{"ISERROR":true}`,
	`{"is\u0045rror":true}`,
	`{"iſError":true}`,
	`{"isError":"yes"}`,
	`{"a":1,"b":[1,{"c":"}"}],"isError":true}`,
	`{}`,
	`{"isError":true`,
	`[true]`,
	`{"isError":true} x`,
	``,
}

// FuzzIsErrorOf: the scan that gives Response.IsError agrees with
// encoding/json, which decodes the result the caller gets, on every input.
func FuzzIsErrorOf(f *testing.F) {
	for _, s := range isErrorSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var w struct {
			IsError bool `json:"isError"`
		}
		err := json.Unmarshal(b, &w)
		got := isErrorOf(b)
		if err == nil && got != w.IsError {
			t.Fatalf("isErrorOf(%q) = %v, encoding/json %v", b, got, w.IsError)
		}
		if err != nil && got {
			t.Fatalf("isErrorOf(%q) = true on JSON encoding/json rejects (%v)", b, err)
		}
	})
}
