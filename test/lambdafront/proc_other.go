//go:build !linux

package main

import (
	"errors"
	"os/exec"
)

// The emulator only runs on Linux; elsewhere the front door builds but
// cannot clean up after the emulator's function process.

func setProcAttr(*exec.Cmd) {}

func childPIDs(int) []int { return nil }

func killPID(int) {}

func stopPID(int) error { return errors.New("freezing a sandbox needs Linux") }

func continuePID(int) error { return nil }
