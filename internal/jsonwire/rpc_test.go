package jsonwire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// The hand-written JSON-RPC encoders against encoding/json: each one's
// output is byte for byte what encoding/json writes for the corresponding
// struct, and every member of that struct is written when it is set.

type rpcResult struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
}

type rpcErrorObject struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Error   rpcErrorObject  `json:"error"`
}

type rpcNotification struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

// wantJSON is encoding/json's encoding of v.
func wantJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// assertMembers fails unless out, a JSON object, has a member for the json
// name of every field of the struct v whose value is not zero: the check
// that catches a field added to the struct and forgotten by its encoder.
func assertMembers(t *testing.T, out []byte, v any) {
	t.Helper()
	var got map[string]json.RawMessage
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	rv := reflect.ValueOf(v)
	for i := range rv.NumField() {
		f := rv.Type().Field(i)
		name, _, _ := bytes.Cut([]byte(f.Tag.Get("json")), []byte(","))
		if string(name) == "-" || rv.Field(i).IsZero() {
			continue
		}
		if _, ok := got[string(name)]; !ok {
			t.Errorf("%s: no member %q for field %s", out, name, f.Name)
		}
	}
}

func TestAppendResultDifferential(t *testing.T) {
	t.Parallel()
	for _, c := range []rpcResult{
		{"2.0", json.RawMessage(`1`), json.RawMessage(`{}`)},
		{"2.0", json.RawMessage(`"ab"`), json.RawMessage(`{"content":[{"type":"text","text":"x"}]}`)},
		{"2.0", json.RawMessage(`-7`), json.RawMessage(`{"k":[1,2,{"n":null}]}`)},
	} {
		got := AppendResult(nil, c.ID, c.Result)
		if want := wantJSON(t, c); !bytes.Equal(got, want) {
			t.Errorf("AppendResult = %s, encoding/json %s", got, want)
		}
		assertMembers(t, got, c)
	}
}

func TestAppendErrorDifferential(t *testing.T) {
	t.Parallel()
	for _, c := range []rpcError{
		{"2.0", json.RawMessage(`1`), rpcErrorObject{-32602, "Invalid params", nil}},
		{"2.0", nil, rpcErrorObject{-32700, "Parse error: <&>", nil}},
		{"2.0", json.RawMessage(`"x"`), rpcErrorObject{-32021, "Missing capabilities \u2028", map[string]any{"requiredCapabilities": map[string]any{"sampling": map[string]any{}}}}},
		{"2.0", json.RawMessage(`2`), rpcErrorObject{-32602, "bad", []string{"a", "b"}}},
	} {
		got := AppendError(nil, c.ID, c.Error.Code, c.Error.Message, c.Error.Data)
		if want := wantJSON(t, c); !bytes.Equal(got, want) {
			t.Errorf("AppendError = %s, encoding/json %s", got, want)
		}
		assertMembers(t, got, c)
		var env struct{ Error json.RawMessage }
		json.Unmarshal(got, &env)
		assertMembers(t, env.Error, c.Error)
	}
}

func TestAppendNotificationDifferential(t *testing.T) {
	t.Parallel()
	for _, c := range []rpcNotification{
		{"2.0", "notifications/progress", json.RawMessage(`{"progressToken":1,"progress":0.5}`)},
		{"2.0", "notifications/initialized", nil},
		{"2.0", "odd \"method\" <x>", json.RawMessage(`{}`)},
	} {
		got := AppendNotification(nil, c.Method, c.Params)
		if want := wantJSON(t, c); !bytes.Equal(got, want) {
			t.Errorf("AppendNotification = %s, encoding/json %s", got, want)
		}
		assertMembers(t, got, c)
	}
}

// FuzzAppendErrorDifferential compares AppendError with encoding/json on
// arbitrary codes and messages.
func FuzzAppendErrorDifferential(f *testing.F) {
	f.Add(-32602, "Invalid params", "detail")
	f.Add(0, "", "")
	f.Add(-1, "\xff<\u2028>", "\x00")
	f.Fuzz(func(t *testing.T, code int, msg, data string) {
		var d any
		if data != "" {
			d = data
		}
		c := rpcError{"2.0", json.RawMessage(`1`), rpcErrorObject{code, msg, d}}
		if got, want := AppendError(nil, c.ID, code, msg, d), wantJSON(t, c); !bytes.Equal(got, want) {
			t.Fatalf("AppendError = %s, encoding/json %s", got, want)
		}
	})
}
