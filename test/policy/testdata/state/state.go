// Package state is the fixture of TestNoPackageStateRule: each variable is
// either allowed by the rule of TestNoPackageState or named in its want
// list.
package state

import (
	"errors"
	"io"
	"net/netip"
	"strings"
	"sync"
)

// Allowed.
var (
	_           io.Reader = (*strings.Reader)(nil)        // a compile-time interface check
	ErrSentinel           = errors.New("state: sentinel") // a sentinel error
	errPrivate            = errors.New("state: private")  // an unexported one
	limit                 = 42                            // a value nothing writes
	modes                 = [...]string{"a", "b"}         // an array nothing writes
	prefix                = netip.MustParsePrefix("10.0.0.0/8")
	table2                = [...]struct {
		p    netip.Prefix
		name string
	}{{netip.MustParsePrefix("::/96"), "v4"}}
)

// Mutable state.
var (
	registry      = map[string]int{}   // a map
	counter       int                  // written below
	hits          = 0                  // incremented below
	mu            sync.Mutex           // a sync type
	once          sync.Once            // a sync type
	cache         sync.Map             // a sync type, Store is a pointer method
	versions      = []string{"1", "2"} // a slice
	table         = &struct{ n int }{} // a pointer
	names         = [...]string{"x"}   // sliced below
	handler       func()               // a function
	cfg           struct{ m map[string]string }
	errReassigned = errors.New("state: reassigned") // reassigned below
	point         struct{ x, y int }                // a field written below
	addressed     [2]int                            // addressed below
	ptrCalled     strings.Builder                   // a pointer method called below
	methodValue   strings.Builder                   // a pointer method value taken below
	rangeTarget   string                            // assigned by a range clause below
	fieldWritten  = struct{ n [2]int }{}            // an element of a field written below
	deep          = [1][]int{{1}}                   // an array of slices
	nested        struct{ inner struct{ ch chan int } }
	anyValue      any = 1 // an interface that is no sentinel
)

func use() {
	counter = 1
	hits++
	cache.Store("k", 1)
	_ = names[:]
	errReassigned = errors.New("other")
	point.x = 3
	_ = &addressed
	ptrCalled.WriteString("x")
	f := methodValue.String
	_ = f
	for _, rangeTarget = range modes {
	}
	fieldWritten.n[1] = 2
	_, _, _, _ = limit, modes[0], prefix.Contains(netip.Addr{}), table2[0].p.Bits()
	_ = errPrivate
	for _, p := range table2 {
		_ = p.name
	}
}
