// Package testseeds holds the inputs core's tests and fuzz targets share
// with those of internal/jsonwire: the JSON bodies of the golden wire
// files and the official examples, the hostile messages, and large
// generated objects. Only tests import it.
package testseeds

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Bodies returns the JSON bodies of the golden requests (wire/*/*.txtar)
// and of the 2026-07-28 examples under testdata, core's testdata folder.
func Bodies(testdata string) ([][]byte, error) {
	var out [][]byte
	files, _ := filepath.Glob(filepath.Join(testdata, "wire", "*", "*.txtar"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		s := string(b)
		i := strings.Index(s, "-- request --\n")
		j := strings.Index(s, "-- response --")
		if i < 0 || j < i {
			continue
		}
		req := s[i+len("-- request --\n") : j]
		if k := strings.Index(req, "\n\n"); k >= 0 {
			out = append(out, []byte(strings.TrimSpace(req[k+2:])))
		}
	}
	ex, _ := filepath.Glob(filepath.Join(testdata, "spec", "2026-07-28", "examples", "*", "*.json"))
	for _, f := range ex {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	if len(out) < 10 {
		return nil, fmt.Errorf("only %d seeds under %s", len(out), testdata)
	}
	return out, nil
}

// Hostile returns the malformed or unusual JSON-RPC messages of
// testdata/hostile_seeds.json.
func Hostile(testdata string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(testdata, "hostile_seeds.json"))
	if err != nil {
		return nil, err
	}
	var out []string
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// ManyKeys returns an object with n distinct keys in reverse order.
func ManyKeys(n int) []byte {
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
