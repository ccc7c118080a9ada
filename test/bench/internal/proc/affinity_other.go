//go:build !linux

package proc

import "errors"

// PinSelf is only implemented on Linux.
func PinSelf(cpu int) error { return errors.New("CPU pinning needs Linux") }
