// Command floor is the CPU floor of the benchmark: a bare net/http +
// encoding/json handler that answers exactly the requests the load generator
// sends (modern 2026-07-28 tools/call and server/discover, legacy initialize,
// notifications/initialized and tools/call) with the cheapest reply that looks
// correct. It validates nothing and implements no protocol beyond that.
package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/mcpfn/mcpfn/test/bench/internal/serve"
)

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string `json:"name"`
		Arguments struct {
			A    int64  `json:"a"`
			B    int64  `json:"b"`
			Text string `json:"text"`
			N    int    `json:"n"`
		} `json:"arguments"`
	} `json:"params"`
}

const maxPayload = 16 << 20

var xs = bytes.Repeat([]byte{'x'}, 64<<10)

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 8192); return &b }}

func main() {
	serve.Main("floor", newHandler())
}

// newHandler returns the floor handler.
func newHandler() http.Handler { return http.HandlerFunc(handle) }

func handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	inp := bufPool.Get().(*[]byte)
	outp := bufPool.Get().(*[]byte)
	defer func() { bufPool.Put(inp); bufPool.Put(outp) }()
	in, err := readAll((*inp)[:0], r.Body)
	*inp = in[:0]
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var req request
	if err := json.Unmarshal(in, &req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if len(req.ID) == 0 { // notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	modern := r.Header.Get("Mcp-Protocol-Version") >= "2026-07-28"

	out := append((*outp)[:0], `{"jsonrpc":"2.0","id":`...)
	defer func() { *outp = out[:0] }()
	out = append(out, req.ID...)
	switch req.Method {
	case "tools/call":
		args := &req.Params.Arguments
		switch req.Params.Name {
		case "add":
			sum := strconv.AppendInt(nil, args.A+args.B, 10)
			out = append(out, `,"result":{"content":[{"type":"text","text":"{\"sum\":`...)
			out = append(out, sum...)
			out = append(out, `}"}],"structuredContent":{"sum":`...)
			out = append(out, sum...)
			out = append(out, '}')
		case "echo":
			text, _ := json.Marshal(args.Text)
			out = append(out, `,"result":{"content":[{"type":"text","text":`...)
			out = append(out, text...)
			out = append(out, "}]"...)
		case "payload":
			n := min(max(args.N, 0), maxPayload)
			out = append(out, `,"result":{"content":[{"type":"text","text":"`...)
			for n > 0 {
				k := min(n, len(xs))
				out = append(out, xs[:k]...)
				n -= k
			}
			out = append(out, `"}]`...)
		default:
			out = append(out, `,"error":{"code":-32602,"message":"unknown tool"}}`...)
			write(w, out)
			return
		}
		if modern {
			out = append(out, `,"resultType":"complete"`...)
		}
		out = append(out, "}}"...)
	case "server/discover":
		out = append(out, `,"result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}},"ttlMs":0,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"floor","version":"1.0.0"}}}}`...)
	case "initialize":
		out = append(out, `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"floor","version":"1.0.0"}}}`...)
	default:
		out = append(out, `,"error":{"code":-32601,"message":"method not found"}}`...)
	}
	write(w, out)
}

func write(w http.ResponseWriter, out []byte) {
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(out))}
	_, _ = w.Write(out)
}

// readAll appends the whole of r to buf.
func readAll(buf []byte, r io.Reader) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
