// Command mkzip writes a Lambda deployment package: a zip holding one
// executable, stored as "bootstrap" with mode 0755, as the provided.al2023
// runtime runs it. The archive is reproducible (fixed timestamp).
//
//	go run ./internal/mkzip OUT.zip BOOTSTRAP
package main

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: mkzip OUT.zip BOOTSTRAP")
		os.Exit(2)
	}
	if err := write(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "mkzip:", err)
		os.Exit(1)
	}
}

func write(out, bootstrap string) error {
	in, err := os.Open(bootstrap)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	zw := zip.NewWriter(f)
	h := &zip.FileHeader{Name: "bootstrap", Method: zip.Deflate, Modified: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	h.SetMode(0o755)
	w, err := zw.CreateHeader(h)
	if err == nil {
		_, err = io.Copy(w, in)
	}
	if err == nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, out)
}
