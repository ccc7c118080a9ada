package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/mcp"
)

// localModules maps every public module of the repository to its
// directory: the replace directives of a project made from this checkout.
func localModules(t *testing.T) map[string]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	mods := map[string]string{}
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			switch rel {
			case ".git", "test", "examples", "tools", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != "go.mod" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		line, _, _ := strings.Cut(string(b), "\n")
		mod, ok := strings.CutPrefix(line, "module ")
		if !ok {
			t.Fatalf("%s: no module line first", p)
		}
		mods[strings.TrimSpace(mod)] = filepath.Dir(p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return mods
}

// TestNewTargets makes a project of every target from this checkout and
// checks what the scaffold promises: go test passes out of the box (its
// test calls the tool in both eras through package mcptest), the project
// builds as its platform builds it, and the second command, mcpfn dev,
// serves it behind its platform's door, where the tool answers.
func TestNewTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("builds four generated modules")
	}
	replace := localModules(t)
	env := devGoEnv(t)
	for _, target := range newTargets {
		t.Run(target, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "my-tools")
			s := &scaffold{Dir: dir, Target: target, Replace: replace, Tidy: true, Env: env}
			files, err := s.run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want := []string{".gitignore", "README.md", "go.mod", "go.sum", "tools.go", "tools_test.go"}
			switch target {
			case "lambda":
				want = append(want, "infra/main.tf", "infra/outputs.tf", "infra/variables.tf", "infra/versions.tf", "main.go")
			case "gcf":
				want = append(want, "function.go", "infra/main.tf", "infra/variables.tf", "infra/versions.tf")
			case "workers":
				want = append(want, "main.go", "main_other.go")
			case "http":
				want = append(want, "main.go")
			}
			slices.Sort(want)
			got := slices.Clone(files)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("files %q, want %q", got, want)
			}
			goCmd := func(extra []string, args ...string) {
				t.Helper()
				cmd := exec.Command("go", args...)
				cmd.Dir = dir
				cmd.Env = append(slices.Clone(env), extra...)
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				if err := cmd.Run(); err != nil {
					t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out.Bytes())
				}
			}
			// go test vets the package too (its high-confidence checks) and
			// compiles it for this machine.
			goCmd(nil, "test", "-count=1", "./...")
			// As the platform builds it, where that is another build: with
			// mcpfn package's flags (-trimpath also lets every such build of
			// the suite share the go command's cache).
			bin := filepath.Join(t.TempDir(), "bin")
			switch target {
			case "lambda":
				goCmd([]string{"GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0"}, "build", "-tags", "lambda.norpc", "-trimpath", "-o", bin, ".")
			case "workers":
				goCmd([]string{"GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0"}, "build", "-trimpath", "-o", bin, ".")
			}
			// The second command: mcpfn dev serves the project behind its
			// platform's door, and the tool answers there.
			var extra []string
			if target == "workers" {
				extra = append(extra, "MCPFN_WORKERD="+devWorkerd(t))
			}
			d := startDev(t, dir, extra)
			ctx := t.Context()
			conn, err := client.Connect(ctx, d.url, nil)
			if err != nil {
				t.Fatalf("connecting to mcpfn dev's %s: %v", d.url, err)
			}
			defer conn.Close()
			res, err := conn.CallTool(ctx, "add", map[string]int{"left": 2, "right": 3}, nil)
			if err != nil {
				t.Fatalf("add through mcpfn dev: %v", err)
			}
			if len(res.Content) != 1 {
				t.Fatalf("add through mcpfn dev: content %+v", res.Content)
			}
			if text, ok := res.Content[0].(*mcp.TextContent); !ok || text.Text != "5" {
				t.Errorf("add through mcpfn dev: %+v, want the text 5", res.Content[0])
			}
			if target == "gcf" {
				b, err := os.ReadFile(filepath.Join(dir, "function.go"))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(b, []byte("\npackage mytools\n")) {
					t.Errorf("function.go is not package mytools:\n%s", b)
				}
			}
		})
	}
}

// TestNewLambdaInfraIsOwnFunction keeps the Terraform that mcpfn new
// writes for Lambda equal to infra/terraform/examples/own-function, which
// the Terraform stage of make test validates, plans and tests, but for the
// function's default name.
func TestNewLambdaInfraIsOwnFunction(t *testing.T) {
	for _, f := range []string{"main.tf", "outputs.tf", "variables.tf", "versions.tf"} {
		want, err := os.ReadFile(filepath.Join("../../infra/terraform/examples/own-function", f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := templates.ReadFile("templates/lambda/infra/" + f + ".tmpl")
		if err != nil {
			t.Fatal(err)
		}
		got = bytes.ReplaceAll(got, []byte(`"__NAME__"`), []byte(`"my-mcp-server"`))
		got = bytes.ReplaceAll(got, []byte(`?ref=__REF__"`), []byte(`?ref=v0.1.0"`))
		if !bytes.Equal(got, want) {
			t.Errorf("templates/lambda/infra/%s.tmpl differs from infra/terraform/examples/own-function/%s", f, f)
		}
	}
}

// TestNewRefusals checks the errors of mcpfn new: an unknown target, and a
// directory that already holds files, which it leaves as it was.
func TestNewRefusals(t *testing.T) {
	dir := t.TempDir()
	if _, err := (&scaffold{Dir: filepath.Join(dir, "x"), Target: "azure"}).run(context.Background()); err == nil || !strings.Contains(err.Error(), "unknown target") {
		t.Errorf("target azure: %v", err)
	}
	keep := filepath.Join(dir, "main.go")
	if err := os.WriteFile(keep, []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (&scaffold{Dir: dir, Target: "http"}).run(context.Background()); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("non-empty directory: %v", err)
	}
	if b, _ := os.ReadFile(keep); string(b) != "package main\n" {
		t.Errorf("main.go changed to %q", b)
	}
	for in, want := range map[string]string{"my-tools": "mytools", "9lives": "mcp9lives", "Calc_2": "calc_2", "---": "mcp"} {
		if got := packageName(in); got != want {
			t.Errorf("packageName(%q) = %q, want %q", in, got, want)
		}
	}
}
