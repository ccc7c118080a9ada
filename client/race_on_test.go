//go:build race

package client_test

// raceAllocSlack is what the race detector adds to an allocation count: its
// sync.Pool drops items at random, so some Gets allocate (sync.Pool docs).
const raceAllocSlack = 2
