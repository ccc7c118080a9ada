//go:build !linux

package main

import "os/exec"

// The emulator only runs on Linux; elsewhere the front door builds but
// cannot clean up after the emulator's function process.

func setProcAttr(*exec.Cmd) {}

func killPID(int) {}
