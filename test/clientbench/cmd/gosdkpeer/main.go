// Command gosdkpeer serves package gosdkpeer (a go-sdk v1.8.0 server) on
// loopback for test/interop/peers.sh: MCP at /mcp, what reached it as JSON
// at GET /stats. It prints "serving MCP on URL" once it listens.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"

	"github.com/mcpfn/mcpfn/test/clientbench/gosdkpeer"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	h, st := gosdkpeer.Handler()
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		s := st.Snapshot()
		json.NewEncoder(w).Encode(&s)
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("serving MCP on http://%s/mcp\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
