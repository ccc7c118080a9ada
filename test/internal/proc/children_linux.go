package proc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Children returns the processes pid started that are still running (read
// from /proc; nil on systems without it).
func Children(pid int) []int {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	var pids []int
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for f := range strings.FieldsSeq(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				pids = append(pids, n)
			}
		}
	}
	return pids
}
