// Package authfield tests package auth from outside, the way it meets the
// field: the examples/auth binary runs as a process over real TCP in front
// of real authorization servers (auth/authtest) that the tests steer
// (a JWKS fetch held in flight, redirects, outages, counts of what they
// served). The tests build the binary with the go command and are skipped
// under -short.
package authfield
