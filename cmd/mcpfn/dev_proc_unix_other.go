//go:build unix && !linux

package main

import "syscall"

func devDeathSignal(*syscall.SysProcAttr) {}
