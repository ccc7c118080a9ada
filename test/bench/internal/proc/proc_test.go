package proc

import (
	"os"
	"runtime"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	t.Parallel()
	// comm with spaces and parentheses, as a process may name itself.
	data := []byte("1234 (my (odd) proc) S 1 1234 1234 0 -1 4194560 1000 0 0 0 250 37 0 0 20 0 8 0 100 1000000 500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n")
	u, s, err := ParseStat(data)
	if err != nil || u != 250 || s != 37 {
		t.Fatalf("utime %d stime %d err %v", u, s, err)
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 u s"} {
		if _, _, err := ParseStat([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseStatusKB(t *testing.T) {
	t.Parallel()
	data := []byte("Name:\tserver\nVmPeak:\t  1709576 kB\nVmHWM:\t    12424 kB\nVmRSS:\t    11000 kB\nThreads:\t6\n")
	n, err := ParseStatusKB(data, "VmHWM")
	if err != nil || n != 12424*1024 {
		t.Fatalf("VmHWM %d err %v", n, err)
	}
	if _, err := ParseStatusKB(data, "VmSwap"); err == nil {
		t.Error("missing key: no error")
	}
	if _, err := ParseStatusKB(data, "Threads"); err != nil {
		t.Errorf("unitless value: %v", err)
	}
}

func TestParseSchedstat(t *testing.T) {
	t.Parallel()
	d, err := ParseSchedstat([]byte("123456789 2000 31\n"))
	if err != nil || d != 123456789*time.Nanosecond {
		t.Fatalf("%v %v", d, err)
	}
	if _, err := ParseSchedstat([]byte("")); err == nil {
		t.Error("empty: no error")
	}
}

func TestParseCPUModel(t *testing.T) {
	t.Parallel()
	data := []byte("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\nflags\t\t: fpu\n\nprocessor\t: 1\nmodel name\t: other\n")
	if got := ParseCPUModel(data); got != "Intel(R) Xeon(R) CPU @ 2.20GHz" {
		t.Errorf("model %q", got)
	}
	if got := ParseCPUModel([]byte("processor : 0\n")); got != "" {
		t.Errorf("model %q, want empty", got)
	}
}

func TestParseProcStat(t *testing.T) {
	t.Parallel()
	data := []byte("cpu  100 5 20 1000 7 1 2 3 0 0\ncpu0 60 5 10 500 3 1 1 2 0 0\ncpu1 40 0 10 500 4 0 1 1 0 0\nintr 1 2 3\nctxt 5\n")
	m, err := ParseProcStat(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := m[-1]; got.Busy != 128*ClockTick || got.Idle != 1007*ClockTick || got.Steal != 3*ClockTick {
		t.Errorf("cpu %+v", got)
	}
	if got := m[0]; got.Busy != 77*ClockTick || got.Idle != 503*ClockTick {
		t.Errorf("cpu0 %+v", got)
	}
	if _, ok := m[1]; !ok {
		t.Error("no cpu1")
	}
	if _, err := ParseProcStat([]byte("intr 1\n")); err == nil {
		t.Error("no cpu line: no error")
	}
}

func TestLiveReaders(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	pid := os.Getpid()
	if _, err := CPUTime(pid); err != nil {
		t.Errorf("CPUTime: %v", err)
	}
	if n, err := PeakRSS(pid); err != nil || n <= 0 {
		t.Errorf("PeakRSS: %d %v", n, err)
	}
	if _, err := os.Stat("/proc/self/schedstat"); err == nil {
		if d, err := SchedCPUTime(pid); err != nil || d <= 0 {
			t.Errorf("SchedCPUTime: %v %v", d, err)
		}
	}
	if _, err := SystemCPU(); err != nil {
		t.Errorf("SystemCPU: %v", err)
	}
	if CPUModel() == "" {
		t.Error("empty CPU model")
	}
}
