package mcp

import (
	"encoding/json"
	"reflect"
	"testing"
)

var callToolResultSeeds = []string{
	`{"content":[{"type":"text","text":"{\"sum\":5}"}],"structuredContent":{"sum":5},"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bench","version":"1"}}}`,
	`{"content":[]}`, `{"content":null,"structuredContent":null,"isError":null,"_meta":null}`,
	`{"content":[{"type":"text","text":"a"},{"type":"tool_use"},{"type":"image","data":"AA==","mimeType":"image/png"}],"isError":true}`,
	`{"Content":[{"type":"text","text":"a"}]}`, `{"content":[],"content":[{"type":"text","text":"b"}]}`,
	`{"isError":"yes"}`, `{"content":{}}`, `{"_meta":[]}`, `{"_meta":{"k":1e400}}`, `{"\u0063ontent":[]}`,
	`{"content":[{"type":"text","text":"\u00e9\ud800"}]}`, `{"content":[{"type":"text","text":"bad \xff utf-8"}]}`,
	`{"content":[{"TYPE":"text","text":"x"},{"type":"text","Text":"y"},{"type":"text","text":1},{"type":"text","text":"z","type":"text"}]}`,
	`{"content":[{"type":"text","text":"x","annotations":{"priority":0.5},"_meta":{"a":[1,{"b":null}]}}]}`,
	`{"content":[ {"type" : "text" , "text" : "spaced"} , {"type":"resource_link","uri":"u","name":"n"} ]}`,
	`[]`, `null`, `{`, `{"content":[1,2]}`, `{"isError":false,"structuredContent":"s","extra":{"content":5}}`,
}

// FuzzCallToolResultDecode: the reflection-free decoder of tools/call
// results reads every input as encoding/json's rules do (decodeSlow): the
// same value, or the same failure.
func FuzzCallToolResultDecode(f *testing.F) {
	for _, s := range callToolResultSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast CallToolResult
		ok, ferr := fast.decodeFast(data)
		var slow CallToolResult
		serr := slow.decodeSlow(data)
		if !ok {
			if !reflect.DeepEqual(fast, CallToolResult{}) {
				t.Fatalf("decodeFast declined %q but changed the result: %+v", data, fast)
			}
			return
		}
		if (ferr != nil) != (serr != nil) {
			t.Fatalf("%q: fast error %v, encoding/json error %v", data, ferr, serr)
		}
		if ferr == nil && !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nfast           %#v\nencoding/json  %#v", data, fast, slow)
		}
		var viaJSON CallToolResult
		if json.Unmarshal(data, &viaJSON) == nil && ferr == nil && !reflect.DeepEqual(viaJSON, slow) {
			t.Fatalf("%q: json.Unmarshal %#v, decodeSlow %#v", data, viaJSON, slow)
		}
	})
}

// FuzzUnmarshalContent: the fast path of text blocks reads every input as
// the reflection-based decoder does.
func FuzzUnmarshalContent(f *testing.F) {
	for _, s := range []string{
		`{"type":"text","text":"x"}`, `{"text":"x","type":"text"}`, `{"type":"text","text":"\u003c\ud83d\ude00"}`,
		`{"type":"text","text":"x","annotations":{"audience":["user"]}}`, `{"type":"Text","text":"x"}`, `{"Type":"text","text":"x"}`,
		`{"type":"text","text":null}`, `{"type":"text"}`, `{"type":"text","text":"a","text":"b"}`, `{"type":"image","data":"AA==","mimeType":"m"}`,
		`{"type":"text","text":"\xff"}`, `{"type":"text","text":"x","mimeType":7}`, `"text"`, `{"t\u0079pe":"text","text":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := textFast(data)
		if !ok {
			return
		}
		slow, err := unmarshalContentSlow(data)
		if err != nil || !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast %#v, encoding/json %#v (%v)", data, fast, slow, err)
		}
	})
}

// TestFastDecodersAgree runs the seeds of the differential fuzz targets as
// a test, and checks that the fast paths do take the common shapes.
func TestFastDecodersAgree(t *testing.T) {
	t.Parallel()
	var r CallToolResult
	if ok, err := r.decodeFast([]byte(callToolResultSeeds[0])); !ok || err != nil || len(r.Content) != 1 || r.Meta == nil {
		t.Fatalf("the common result took the slow path: %v %v %+v", ok, err, r)
	}
	if _, ok := textFast([]byte(`{"type":"text","text":"x"}`)); !ok {
		t.Fatal("a plain text block took the slow path")
	}
	for _, s := range []string{`{"Content":[]}`, `{"content":[],"content":[]}`, `{"\u0063ontent":[]}`, `{"isError":1}`} {
		if ok, _ := new(CallToolResult).decodeFast([]byte(s)); ok {
			t.Errorf("%s: decodeFast took it; encoding/json's rules are needed", s)
		}
	}
}

// FuzzDecodeMeta: valueFast reads every value as encoding/json reads it
// into an any.
func FuzzDecodeMeta(f *testing.F) {
	for _, s := range []string{
		`{"io.modelcontextprotocol/serverInfo":{"name":"bench","version":"1"}}`, `{}`, `{"a":[1,-2.5e3,true,false,null,"s",{"b":[]}]}`,
		`{"k":1e400}`, `{"\u006b":"v","k":"w"}`, `{"k":"\ud800"}`, `{"k":"\xff"}`, `{"k\xff":1}`, `[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]`,
		`{"a":1,"a":2}`, `"x"`, `0`, `-0`, `1E-7`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		fast, ok := valueFast(data, 0)
		if !ok {
			return
		}
		var slow any
		if err := json.Unmarshal(data, &slow); err != nil || !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast %#v, encoding/json %#v (%v)", data, fast, slow, err)
		}
	})
}

// FuzzToolDecode: the reflection-free decoder of tool definitions reads
// every input as encoding/json's rules do (decodeSlow).
func FuzzToolDecode(f *testing.F) {
	for _, s := range []string{
		`{"name":"add","inputSchema":{"additionalProperties":false,"properties":{"A":{"type":"integer"}},"type":"object"},"outputSchema":{"type":"object"}}`,
		`{"name":"t","title":"T","description":"d\u00e9","icons":[{"src":"s","sizes":["1x1"]}],"annotations":{"readOnlyHint":true},"_meta":{"k":[1,"x"]},"inputSchema":{},"execution":{"taskSupport":"optional"}}`,
		`{"name":null,"inputSchema":null,"outputSchema":null,"icons":null,"annotations":null,"_meta":null}`, `{"Name":"x"}`, `{"name":"a","name":"b"}`,
		`{"name":1}`, `{"icons":{}}`, `{"annotations":[]}`, `{"_meta":1}`, `{"name":"\xff"}`, `{"n\u0061me":"x"}`, `[]`, `{`, `{"title":"t","title":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast Tool
		ok, ferr := fast.decodeFast(data)
		if !ok {
			if !reflect.DeepEqual(fast, Tool{}) {
				t.Fatalf("decodeFast declined %q but changed the tool: %+v", data, fast)
			}
			return
		}
		var slow Tool
		serr := slow.decodeSlow(data)
		if (ferr != nil) != (serr != nil) || (ferr == nil && !reflect.DeepEqual(fast, slow)) {
			t.Fatalf("%q:\nfast           %#v (%v)\nencoding/json  %#v (%v)", data, fast, ferr, slow, serr)
		}
	})
}
