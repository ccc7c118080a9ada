package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// lambdaSize is the stripped size of one Lambda bootstrap.
type lambdaSize struct {
	Name, Descr string
	Bytes       int64
	Err         string
}

// buildLambdaSizes builds, for linux/arm64 and with the flags of
// examples/lambda/build.sh, the mcpfn Lambda example and the same tool on
// the official Go SDK with aws-lambda-go's lambdaurl, plus mcpfn's core and
// Lambda adapter alone (no AWS SDK clients), and returns their sizes.
func buildLambdaSizes(benchDir, root, outDir string) []lambdaSize {
	builds := []struct {
		name, descr, dir, pkg string
	}{
		{"mcpfn", "examples/lambda: calculator, DynamoDB sessions and Secrets Manager keys (AWS SDK clients)", root, "./examples/lambda"},
		{"gosdk", "the same tool on go-sdk (stateless) with aws-lambda-go lambdaurl", benchDir, "./servers/gosdklambda"},
		{"mcpfn-core", "the same tool on mcpfn core + adapters/lambda only (in-memory state: go-sdk's feature set)", root, "./test/sizes/mcpfnlambda"},
	}
	var out []lambdaSize
	for _, b := range builds {
		bin := filepath.Join(outDir, "lambda-"+b.name)
		cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", bin, b.pkg)
		cmd.Dir = b.dir
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
		s := lambdaSize{Name: b.name, Descr: b.descr}
		if msg, err := cmd.CombinedOutput(); err != nil {
			s.Err = fmt.Sprintf("%v: %s", err, msg)
		} else if fi, err := os.Stat(bin); err != nil {
			s.Err = err.Error()
		} else {
			s.Bytes = fi.Size()
		}
		out = append(out, s)
	}
	return out
}
