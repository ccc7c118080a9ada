// Package rie finds the AWS Lambda runtime interface emulator
// (aws-lambda-rie) for the test module's programs and tests.
package rie

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mcpfn/mcpfn/internal/testenv"
)

// Find returns the path of aws-lambda-rie: $MCPFN_RIE if set, else the one
// test/lambdafront/install-rie.sh installs
// (${MCPFN_TOOLS:-$HOME/.cache/mcpfn/bin}), else the one on $PATH.
func Find() (string, error) {
	if p := os.Getenv("MCPFN_RIE"); p != "" {
		return p, nil
	}
	dir := os.Getenv("MCPFN_TOOLS")
	if dir == "" {
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, ".cache", "mcpfn", "bin")
		}
	}
	if dir != "" {
		p := filepath.Join(dir, "aws-lambda-rie")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath("aws-lambda-rie")
	if err != nil {
		return "", errors.New("aws-lambda-rie not found: run test/lambdafront/install-rie.sh, or set MCPFN_RIE")
	}
	return p, nil
}

// Path returns the path Find finds, or ends the test as testenv.RIE.Missing
// does.
func Path(tb testing.TB) string {
	tb.Helper()
	p, err := Find()
	if err != nil {
		testenv.RIE.Missing(tb, err.Error())
	}
	return p
}
