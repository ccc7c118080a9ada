package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// usageCommands returns the command words a usage text shows: the first
// word after "mcpfn" (and "[flags]") of each line, split at "|".
func usageCommands(text, prefix string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), prefix))
		f := strings.Fields(l)
		if len(f) < 2 || f[0] != "mcpfn" {
			continue
		}
		w := f[1]
		if w == "[flags]" && len(f) > 2 {
			w = f[2]
		}
		if strings.HasPrefix(w, "-") {
			continue // --version | --help
		}
		for _, c := range strings.Split(w, "|") {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestCommandTable: the table of commands and flags the completions are
// made of is the CLI's: the same commands as the usage and the help, each
// dispatched; the same flags as the help, each taken by parseArgs under
// every name, in the scopes the command checks use.
func TestCommandTable(t *testing.T) {
	t.Parallel()
	names := commandNames()
	slices.Sort(names)
	if got := usageCommands(usage, "usage:"); !slices.Equal(got, names) {
		t.Errorf("the usage shows the commands %q; the table has %q", got, names)
	}
	commandsSection, _, _ := strings.Cut(help[strings.Index(help, "commands:"):], "\nURL is")
	if got := usageCommands(commandsSection, ""); !slices.Equal(got, names) {
		t.Errorf("the help shows the commands %q; the table has %q", got, names)
	}
	// Each command once, with nothing to work on: no arguments, an empty
	// directory and a context already cancelled, so that none of them
	// builds, serves or waits.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range commands {
		var out, errb bytes.Buffer
		runEnv(done, []string{c.name}, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, dir: t.TempDir()})
		if strings.Contains(errb.String(), "unknown command") {
			t.Errorf("%s is in the table but not dispatched: %s", c.name, errb.String())
		}
	}
	if code, _, errs := mcpfn(t, "", "frobnicate"); code != exitUsage || !strings.Contains(errs, `unknown command "frobnicate"`) {
		t.Errorf("an unknown command: exit %d %s", code, errs)
	}

	// Every flag, under each of its names, is one parseArgs takes.
	sample := map[string]string{"header": "K: V", "timeout": "1s"}
	var server, pkg, newf []string
	for i := range flags {
		f := &flags[i]
		for _, n := range append([]string{f.name}, f.aliases...) {
			for _, dashes := range []string{"-", "--"} {
				argv := []string{dashes + n}
				if f.value != "" {
					v := sample[f.name]
					if v == "" && f.values != nil {
						v = f.values[0]
					}
					if v == "" {
						v = "x"
					}
					argv = append(argv, v)
				}
				cfg, err := parseArgs(argv)
				if err != nil || !cfg.set[f.name] || len(cfg.args) != 0 {
					t.Errorf("parseArgs(%q): %v (set %v, args %q)", argv, err, cfg != nil && cfg.set[f.name], cfg.args)
				}
			}
		}
		switch f.scope {
		case scopeServer:
			server = append(server, f.name)
		case scopePackage:
			pkg = append(pkg, f.name)
		case scopeNew:
			newf = append(newf, f.name)
		}
	}
	sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	if !slices.Equal(sorted(newf), sorted(newFlags)) {
		t.Errorf("the table's new flags %q are not newFlags %q", newf, newFlags)
	}
	if !slices.Equal(sorted(server), sorted(serverFlags)) || !slices.Equal(sorted(pkg), sorted(packageFlags)) {
		t.Errorf("the table's server flags %q and package flags %q are not serverFlags %q and packageFlags %q", server, pkg, serverFlags, packageFlags)
	}

	// The help's flags are the table's.
	section := help[strings.Index(help, "\nflags"):strings.Index(help, "\noutput:")]
	known := map[string]bool{}
	for i := range flags {
		for _, s := range flags[i].spellings() {
			known[s] = true
		}
		if s := flags[i].spellings()[0]; !regexp.MustCompile(`[\s(]`+regexp.QuoteMeta(s)+`[\s,)]`).MatchString(section) && !strings.Contains(help, "\n  "+s+" ") && !strings.Contains(help, "mcpfn "+s) {
			t.Errorf("the help does not name %s", s)
		}
	}
	for _, m := range regexp.MustCompile(`(?:^|[\s(])(--?[A-Za-z][A-Za-z-]*)`).FindAllStringSubmatch(section, -1) {
		if !known[m[1]] {
			t.Errorf("the help's flag %s is not in the table of flags", m[1])
		}
	}
}

// TestCompletion: mcpfn completion SHELL prints a script naming every
// command and flag; the bash script is valid and completes commands, flags
// (those of the command at hand), flag values and paths as a user would
// see them; zsh checks its script, and fish completes command lines with
// it (the suite installs both: test/shells/install.sh).
func TestCompletion(t *testing.T) {
	t.Parallel()
	scripts := map[string]string{}
	for _, sh := range shells {
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{"completion", sh}, strings.NewReader(""), &out, &errb); code != exitOK || errb.Len() > 0 {
			t.Fatalf("completion %s: exit %d %s", sh, code, errb.String())
		}
		s := out.String()
		for _, c := range commands {
			if !regexp.MustCompile(`\b` + c.name + `\b`).MatchString(s) {
				t.Errorf("the %s script lacks the command %s", sh, c.name)
			}
		}
		for i := range flags {
			if w := flags[i].spellings()[0]; !strings.Contains(s, w) && !strings.Contains(s, "-l "+flags[i].name) && !strings.Contains(s, "-o "+flags[i].name) && !strings.Contains(s, "-s "+flags[i].name) {
				t.Errorf("the %s script lacks the flag %s", sh, w)
			}
		}
		scripts[sh] = s
	}
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}, {"completion", "bash", "zsh"}, {"completion", "bash", "--mode", "modern"}} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, strings.NewReader(""), &out, &errb); code != exitUsage || out.Len() > 0 {
			t.Errorf("%q: exit %d, stdout %q", args, code, out.String())
		}
	}

	dir := t.TempDir()
	for sh, check := range map[string][]string{"bash": {"-n"}, "zsh": {"-n"}, "fish": {"--no-execute"}} {
		t.Run(sh+" syntax", func(t *testing.T) {
			path := shellPath(t, sh)
			file := filepath.Join(dir, "mcpfn."+sh)
			if err := os.WriteFile(file, []byte(scripts[sh]), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(path, append(check, file)...).CombinedOutput(); err != nil {
				t.Errorf("%s %s: %v\n%s", sh, strings.Join(check, " "), err, out)
			}
		})
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	// A user's directory: a package directory and a zip.
	if err := os.Mkdir(filepath.Join(dir, "fnpkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fn.zip"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	complete := func(words ...string) []string {
		t.Helper()
		var q []string
		for _, w := range words {
			q = append(q, shellQuote(w))
		}
		prog := scripts["bash"] + "\nCOMP_WORDS=(" + strings.Join(q, " ") + ")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) +
			"\n_mcpfn\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		cmd := exec.Command("bash", "--norc", "--noprofile", "-c", prog)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("completing %q: %v\n%s", words, err, out)
		}
		got := strings.Fields(string(out))
		slices.Sort(got)
		return got
	}
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"mcpfn", ""}, "call completion dev discover get logout new package prompts read resources stdio tools"},
		{[]string{"mcpfn", "re"}, "read resources"},
		{[]string{"mcpfn", "--mode", ""}, "auto legacy modern"},
		{[]string{"mcpfn", "--mode", "modern", "pa"}, "package"},
		{[]string{"mcpfn", "tools", "http://127.0.0.1:8080/mcp", "--log-level", "e"}, "emergency error"},
		{[]string{"mcpfn", "call", "http://127.0.0.1:8080/mcp", "--an"}, "--answer"},
		{[]string{"mcpfn", "call", "http://127.0.0.1:8080/mcp", "-a"}, ""}, // -arch is package's
		{[]string{"mcpfn", "package", ""}, "lambda workers"},
		{[]string{"mcpfn", "package", "lambda", "-a"}, "-arch"},
		{[]string{"mcpfn", "package", "lambda", "-arch", ""}, "amd64 arm64"},
		{[]string{"mcpfn", "package", "lambda", "fn"}, "fnpkg"},
		{[]string{"mcpfn", "package", "-o", "fn"}, "fn.zip fnpkg"},
		{[]string{"mcpfn", "--token", "package", "t"}, "tools"}, // package is the token's value
		{[]string{"mcpfn", "completion", ""}, "bash fish zsh"},
		{[]string{"mcpfn", "new", "x", "-target", ""}, "gcf http lambda workers"},
		{[]string{"mcpfn", "completion", "--j"}, "--json"},
	} {
		if got := strings.Join(complete(tc.words...), " "); got != tc.want {
			t.Errorf("completing %q: %q, want %q", tc.words, got, tc.want)
		}
	}

	// fish completes a command line with the script loaded and no
	// configuration: complete -C prints one candidate a line, its
	// description after a tab.
	t.Run("fish", func(t *testing.T) {
		fish := shellPath(t, "fish")
		file := filepath.Join(dir, "mcpfn.fish")
		for _, tc := range []struct {
			line, want string
		}{
			{"mcpfn ", "call completion dev discover get logout new package prompts read resources stdio tools"},
			{"mcpfn re", "read resources"},
			{"mcpfn --mode ", "auto legacy modern"},
			{"mcpfn --mode modern pa", "package"},
			{"mcpfn package ", "lambda workers"},
			{"mcpfn package lambda -arch ", "amd64 arm64"},
			{"mcpfn new x -target ", "gcf http lambda workers"},
			{"mcpfn completion ", "bash fish zsh"},
		} {
			cmd := exec.Command(fish, "--no-config", "-c", "source "+shellQuote(file)+"; complete -C "+shellQuote(tc.line))
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("fish completing %q: %v\n%s", tc.line, err, out)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if w, _, _ := strings.Cut(l, "\t"); w != "" {
					got = append(got, w)
				}
			}
			slices.Sort(got)
			if strings.Join(got, " ") != tc.want {
				t.Errorf("fish completing %q: %q, want %q", tc.line, strings.Join(got, " "), tc.want)
			}
		}
	})
}

// shellPath is the shell sh: $MCPFN_ZSH or $MCPFN_FISH where set (the
// suite installs both, test/shells/install.sh), else sh on PATH. Missing,
// the test skips, or fails under MCPFN_REQUIRE_SHELLS=1.
func shellPath(t *testing.T, sh string) string {
	t.Helper()
	if p := os.Getenv("MCPFN_" + strings.ToUpper(sh)); p != "" {
		return p
	}
	p, err := exec.LookPath(sh)
	if err != nil {
		if os.Getenv("MCPFN_REQUIRE_SHELLS") == "1" {
			t.Fatalf("%s is not installed (test/shells/install.sh installs it)", sh)
		}
		t.Skipf("%s is not installed: its completion is not checked", sh)
	}
	return p
}
