package main

import (
	"testing"

	"github.com/mcpfn/mcpfn/test/bench/internal/probe"
)

// TestConformance checks that the server answers every request the load
// generator sends, in both protocol eras, with verified results.
func TestConformance(t *testing.T) { probe.TestHandler(t, newHandler()) }
