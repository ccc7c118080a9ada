// Temporary load driver (not committed).
package main

import (
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpfn/mcpfn/test/bench/internal/httpc"
	"github.com/mcpfn/mcpfn/test/bench/internal/probe"
	"github.com/mcpfn/mcpfn/test/bench/internal/wire"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18081", "")
	c := flag.Int("c", 64, "")
	d := flag.Duration("d", 5*time.Second, "")
	flag.Parse()
	call := &wire.Call{Kind: wire.Add, A: 2, B: 3}
	call.Prepare()
	var n atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for i := 0; i < *c; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			conn := httpc.New(*addr, "/mcp", 10*time.Second)
			id := int64(i+1) << 32
			sid, err := probe.Handshake(conn, id)
			if err != nil {
				panic(err)
			}
			hdr := call.Headers() + probe.SessionHeader(sid)
			var body []byte
			for !stop.Load() {
				id++
				body = call.AppendBody(body[:0], id)
				resp, err := conn.Do(hdr, body)
				if err != nil || resp.Status != 200 {
					panic(fmt.Sprint(err, resp.Status))
				}
				n.Add(1)
			}
		}(i)
	}
	time.Sleep(*d)
	stop.Store(true)
	wg.Wait()
	fmt.Println("requests", n.Load())
}
