package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// pkgSize is the code a package contributes to a wasm module.
type pkgSize struct {
	Pkg   string
	Bytes int64
	Funcs int
}

// wasmProfile sums the code of a Go js/wasm module (built without -s, so
// that it has its "name" section) per package: go tool nm does not read
// wasm, so the function bodies of the code section are matched to their
// names here. It returns the packages, largest first, the total code size
// and the size of the data section.
func wasmProfile(path string, deps []string) (pkgs []pkgSize, code, data int64, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, 0, err
	}
	if len(b) < 8 || !bytes.Equal(b[:4], []byte("\x00asm")) {
		return nil, 0, 0, errors.New("not a wasm module")
	}
	r := &reader{b: b, off: 8}
	var imports int
	var bodies []int64
	names := map[int]string{}
	for r.off < len(b) {
		id := r.byte()
		size := int(r.uleb())
		end := r.off + size
		sec := &reader{b: b[:end], off: r.off}
		switch id {
		case 2: // imports: their functions come first in the index space
			for n := sec.uleb(); n > 0; n-- {
				sec.name()
				sec.name()
				kind := sec.byte()
				switch kind {
				case 0:
					sec.uleb()
					imports++
				case 1:
					sec.byte()
					sec.limits()
				case 2:
					sec.limits()
				case 3:
					sec.byte()
					sec.byte()
				}
			}
		case 10: // code
			for n := sec.uleb(); n > 0; n-- {
				sz := sec.uleb()
				bodies = append(bodies, int64(sz))
				code += int64(sz)
				sec.off += int(sz)
			}
		case 11:
			data = int64(size)
		case 0:
			if sec.name() == "name" {
				for sec.off < end {
					sub := sec.byte()
					subEnd := int(sec.uleb()) + sec.off
					if sub == 1 {
						for n := sec.uleb(); n > 0; n-- {
							idx := int(sec.uleb())
							names[idx] = sec.name()
						}
					}
					sec.off = subEnd
				}
			}
		}
		if sec.err != nil {
			return nil, 0, 0, fmt.Errorf("section %d: %v", id, sec.err)
		}
		r.off = end
	}
	if len(names) == 0 {
		return nil, 0, 0, errors.New("no name section (built with -s?)")
	}
	// The name section spells a package path with "_" for "/" and "-": map each
	// spelling back to the package (the longest that prefixes a name).
	mangled := map[string]string{}
	for _, d := range deps {
		mangled[strings.NewReplacer("/", "_", "-", "_").Replace(d)] = d
	}
	sums := map[string]*pkgSize{}
	for i, sz := range bodies {
		p := pkgOf(names[imports+i], mangled)
		if sums[p] == nil {
			sums[p] = &pkgSize{Pkg: p}
		}
		sums[p].Bytes += sz
		sums[p].Funcs++
	}
	for _, s := range sums {
		pkgs = append(pkgs, *s)
	}
	slices.SortFunc(pkgs, func(a, b pkgSize) int { return int(b.Bytes - a.Bytes) })
	return pkgs, code, data, nil
}

// pkgOf returns the package path of a Go symbol name, as
// "github.com_x_y.(*T).M" → "github.com/x/y".
func pkgOf(sym string, mangled map[string]string) string {
	if sym == "" {
		return "(unnamed)"
	}
	best := ""
	for i := 0; i < len(sym); i++ {
		if sym[i] == '.' {
			if p, ok := mangled[sym[:i]]; ok && len(p) > len(best) {
				best = p
			}
		}
	}
	if best != "" {
		return best
	}
	dir, last := "", sym
	if i := strings.LastIndexByte(sym, '/'); i >= 0 {
		dir, last = sym[:i+1], sym[i+1:]
	}
	if i := strings.IndexByte(last, '.'); i >= 0 {
		last = last[:i]
	}
	return dir + last
}

type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) byte() byte {
	if r.off >= len(r.b) {
		r.err = errors.New("truncated")
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

func (r *reader) uleb() uint64 {
	if r.off >= len(r.b) {
		r.err = errors.New("truncated")
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.err = errors.New("bad LEB128")
		return 0
	}
	r.off += n
	return v
}

func (r *reader) name() string {
	n := int(r.uleb())
	if r.off+n > len(r.b) {
		r.err = errors.New("truncated")
		return ""
	}
	s := string(r.b[r.off : r.off+n])
	r.off += n
	return s
}

func (r *reader) limits() {
	if r.byte()&1 == 1 {
		r.uleb()
	}
	r.uleb()
}
