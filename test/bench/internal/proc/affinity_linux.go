package proc

import (
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// PinSelf restricts every thread of the calling process to CPU cpu. Threads
// created later inherit the mask from their creator.
func PinSelf(cpu int) error {
	var mask [16]uint64 // 1024 CPUs
	if cpu < 0 || cpu >= len(mask)*64 {
		return syscall.EINVAL
	}
	mask[cpu/64] = 1 << (uint(cpu) % 64)
	// A thread created during the first pass may have inherited the old
	// mask from a thread not yet pinned; the second pass catches it.
	for range 2 {
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY,
				uintptr(tid), unsafe.Sizeof(mask), uintptr(unsafe.Pointer(&mask)))
			if errno != 0 && errno != syscall.ESRCH {
				return errno
			}
		}
	}
	return nil
}
