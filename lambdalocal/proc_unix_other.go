//go:build unix && !linux

package lambdalocal

import "syscall"

func setDeathSignal(*syscall.SysProcAttr) {}
