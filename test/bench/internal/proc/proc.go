// Package proc reads the few Linux /proc facts the benchmark needs: a
// process's CPU time, peak resident set size, the CPU model, and it pins the
// calling process to one CPU.
package proc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ClockTick is the unit of utime and stime in /proc/<pid>/stat (USER_HZ,
// which the Linux ABI fixes at 100 on every architecture Go supports).
const ClockTick = 10 * time.Millisecond

// ParseStat returns the utime and stime fields (in clock ticks) of the
// contents of a /proc/<pid>/stat file.
func ParseStat(data []byte) (utime, stime uint64, err error) {
	// The comm field (2) is parenthesized and may contain spaces and
	// parentheses; everything after the last ')' is space separated,
	// starting with field 3 (state).
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("proc stat: no ')' in %q", data)
	}
	fields := strings.Fields(string(data[i+1:]))
	// utime is field 14, stime field 15: indexes 11 and 12 after field 3.
	if len(fields) < 13 {
		return 0, 0, fmt.Errorf("proc stat: %d fields after comm", len(fields))
	}
	if utime, err = strconv.ParseUint(fields[11], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("proc stat: utime: %v", err)
	}
	if stime, err = strconv.ParseUint(fields[12], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("proc stat: stime: %v", err)
	}
	return utime, stime, nil
}

// CPUTime returns the user+system CPU time consumed so far by all threads
// (live and exited) of process pid, from /proc/<pid>/stat. Its resolution is
// one clock tick (10 ms).
func CPUTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	u, s, err := ParseStat(data)
	if err != nil {
		return 0, err
	}
	return time.Duration(u+s) * ClockTick, nil
}

// ParseSchedstat returns the first field of a /proc/<pid>/task/<tid>/schedstat
// file: time spent on the CPU, in nanoseconds.
func ParseSchedstat(data []byte) (time.Duration, error) {
	f := strings.Fields(string(data))
	if len(f) < 1 {
		return 0, fmt.Errorf("schedstat: empty")
	}
	ns, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("schedstat: %v", err)
	}
	return time.Duration(ns), nil
}

// SchedCPUTime returns the CPU time of the live threads of process pid with
// nanosecond resolution, summing /proc/<pid>/task/*/schedstat. Threads that
// have exited are not counted (Go programs rarely end threads). It returns an
// error if schedstat is unavailable.
func SchedCPUTime(pid int) (time.Duration, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var total time.Duration
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
		if err != nil {
			if os.IsNotExist(err) {
				continue // thread exited meanwhile
			}
			return 0, err
		}
		d, err := ParseSchedstat(data)
		if err != nil {
			return 0, err
		}
		total += d
	}
	return total, nil
}

// ParseStatusKB returns the value of a "Key:   N kB" line of a
// /proc/<pid>/status file, in bytes.
func ParseStatusKB(data []byte, key string) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != key {
			continue
		}
		f := strings.Fields(v)
		if len(f) < 1 {
			break
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("status %s: %v", key, err)
		}
		if len(f) > 1 && f[1] != "kB" {
			return 0, fmt.Errorf("status %s: unit %q", key, f[1])
		}
		return n << 10, nil
	}
	return 0, fmt.Errorf("status: no %s line", key)
}

// PeakRSS returns the peak resident set size (VmHWM) of process pid in bytes.
func PeakRSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return ParseStatusKB(data, "VmHWM")
}

// ParseCPUModel returns the first "model name" of a /proc/cpuinfo file.
func ParseCPUModel(data []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// CPUModel returns the CPU model name, or "unknown".
func CPUModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		if m := ParseCPUModel(data); m != "" {
			return m
		}
	}
	return "unknown"
}

// CPUTimes are the busy, idle and steal times of one line of /proc/stat.
type CPUTimes struct {
	Busy, Idle, Steal time.Duration
}

// ParseProcStat returns the times of the "cpu" (all CPUs, key -1) and
// "cpuN" (key N) lines of a /proc/stat file. Busy is user+nice+system+irq+
// softirq (guest time is already part of user); Idle is idle+iowait.
func ParseProcStat(data []byte) (map[int]CPUTimes, error) {
	out := map[int]CPUTimes{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 9 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		cpu := -1
		if f[0] != "cpu" {
			n, err := strconv.Atoi(f[0][3:])
			if err != nil {
				continue
			}
			cpu = n
		}
		var v [8]uint64 // user nice system idle iowait irq softirq steal
		for i := range v {
			x, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("/proc/stat %s: %v", f[0], err)
			}
			v[i] = x
		}
		out[cpu] = CPUTimes{
			Busy:  time.Duration(v[0]+v[1]+v[2]+v[5]+v[6]) * ClockTick,
			Idle:  time.Duration(v[3]+v[4]) * ClockTick,
			Steal: time.Duration(v[7]) * ClockTick,
		}
	}
	if _, ok := out[-1]; !ok {
		return nil, fmt.Errorf("/proc/stat: no cpu line")
	}
	return out, nil
}

// SystemCPU reads /proc/stat.
func SystemCPU() (map[int]CPUTimes, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return nil, err
	}
	return ParseProcStat(data)
}
