//go:build !linux

package lambdalocal

import "errors"

// stopPID would freeze a sandbox; only Linux can tell when a stop has
// taken effect (waitid with WNOWAIT).
func stopPID(int) error { return errors.New("freezing a sandbox needs Linux") }

func continuePID(int) error { return nil }
