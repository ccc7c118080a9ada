//go:build !race

package client_test

// raceAllocSlack is what the race detector adds to an allocation count:
// nothing without it.
const raceAllocSlack = 0
