package client

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzDecodeToolsPage: the reflection-free reading of a tools/list result
// agrees with encoding/json's (decodeToolsPageSlow) on every input it
// takes, and a page's odd cache hint or _meta never fails the page.
func FuzzDecodeToolsPage(f *testing.F) {
	for _, s := range []string{
		`{"tools":[{"name":"add","inputSchema":{"type":"object"}}],"resultType":"complete","ttlMs":3600000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bench","version":"1"}}}`,
		`{"tools":[],"nextCursor":""}`, `{"tools":null,"nextCursor":null,"ttlMs":null,"cacheScope":null,"_meta":null}`,
		`{"tools":[1,"x",{}],"ttlMs":60000.0,"cacheScope":7,"_meta":[]}`, `{"Tools":[]}`, `{"tools":[],"tools":[{}]}`,
		`{"tools":{}}`, `{"nextCursor":5}`, `{"nextCursor":"\xff"}`, `{"ttlMs":1e400}`, `{"TTLMS":5,"tools":[]}`, `{"tools":[],"_meta":{"k":1e400}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ferr := decodeToolsPage(data)
		slow, serr := decodeToolsPageSlow(data)
		if (ferr != nil) != (serr != nil) || (ferr == nil && !reflect.DeepEqual(fast, slow)) {
			t.Fatalf("%q:\nfast           %#v (%v)\nencoding/json  %#v (%v)", data, fast, ferr, slow, serr)
		}
		// The strict members alone decide whether the page decodes.
		var strict struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor *string           `json:"nextCursor"`
		}
		if (json.Unmarshal(data, &strict) != nil) != (ferr != nil) {
			t.Fatalf("%q: the page's error %v is not that of tools and nextCursor", data, ferr)
		}
	})
}

// TestDecodeToolsPageLenientHint: an odd hint keeps the page (as the cache
// reads it: a fractional ttlMs truncated, a member of the wrong type left
// out).
func TestDecodeToolsPageLenientHint(t *testing.T) {
	t.Parallel()
	w, err := decodeToolsPage(json.RawMessage(`{"tools":[{"name":"a"}],"ttlMs":60000.7,"cacheScope":7,"_meta":"x"}`))
	if err != nil || len(w.Tools) != 1 || w.TTLMs == nil || *w.TTLMs != 60000 || w.CacheScope != "" || w.Meta != nil {
		t.Fatalf("%+v %v", w, err)
	}
	if _, err := decodeToolsPage(json.RawMessage(`{"tools":{}}`)); err == nil {
		t.Fatal("tools that is not an array accepted")
	}
}
