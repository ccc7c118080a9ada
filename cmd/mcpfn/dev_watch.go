package main

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The watcher of mcpfn dev polls the files of the user's module: no
// dependency, and it works the same on every file system (network mounts
// and containers included, where change notifications often do not).

// devPollInterval is how often the watcher looks at the files.
const devPollInterval = 300 * time.Millisecond

// devMaxWatched bounds the files a snapshot looks at.
const devMaxWatched = 20000

// fileStamp is what the watcher compares of a file.
type fileStamp struct {
	size int64
	mod  time.Time
}

// snapshot maps the watched files of a tree to their stamps.
type snapshot map[string]fileStamp

// watchedFile reports whether a change to the file name means a rebuild:
// the Go sources (tests aside) and the module files.
func watchedFile(name string) bool {
	switch name {
	case "go.mod", "go.sum", "go.work", "go.work.sum":
		return true
	}
	return strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go")
}

// skippedDir reports whether the watcher stays out of a directory: those
// the go command ignores (., _ prefixes, testdata) and node_modules.
func skippedDir(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules"
}

// takeSnapshot returns the stamps of the watched files under root.
func takeSnapshot(root string) snapshot {
	s := snapshot{}
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a file removed while walking: the next poll sees it
		}
		if d.IsDir() {
			if path != root && skippedDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !watchedFile(d.Name()) {
			return nil
		}
		if len(s) >= devMaxWatched {
			return filepath.SkipAll
		}
		if fi, err := d.Info(); err == nil {
			s[path] = fileStamp{fi.Size(), fi.ModTime()}
		}
		return nil
	})
	return s
}

// changed returns the files that differ between two snapshots, sorted.
func changed(a, b snapshot) []string {
	var out []string
	for p, st := range b {
		if a[p] != st {
			out = append(out, p)
		}
	}
	for p := range a {
		if _, ok := b[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// watch polls root until ctx ends. It sends on changes the files changed
// since the snapshot it last sent (initially from), once they have stayed
// the same for one interval, so that an editor's write in several steps
// makes one change. A send waits until the receiver takes it; the changes
// meanwhile join it.
func watch(ctx context.Context, root string, from snapshot, changes chan<- []string) {
	base, last := from, from
	tick := time.NewTicker(devPollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := takeSnapshot(root)
		if len(changed(last, now)) > 0 {
			last = now // still changing: wait for it to settle
			continue
		}
		diff := changed(base, now)
		if len(diff) == 0 {
			continue
		}
		select {
		case changes <- diff:
			base = now
		case <-ctx.Done():
			return
		}
	}
}

// relPath returns path relative to dir when it is inside it.
func relPath(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// fileExists reports whether path is a regular file.
func fileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
