package terraform_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/hcl/v2/hclparse"

	"github.com/mcpfn/mcpfn/store/dynamo"
)

// tftestFiles are the mock-provider tests (tofu test) check.sh runs.
var tftestFiles = []string{
	lambdaModule + "/tests/mock.tftest.hcl",
	terraformDir + "/examples/own-function/tests/outputs.tftest.hcl",
}

// TestMockTestsMatchGo ties the literals of the mock-provider tests to the
// Go code, so that they assert what the store and the deploy kit use: the
// time-to-live attribute the tests expect is dynamo.TTLAttribute, and every
// MCPFN_ variable they name is one the Go code reads. The files must parse.
func TestMockTestsMatchGo(t *testing.T) {
	t.Parallel()
	goNames, read := goEnvNames(t, readers...)
	if len(goNames) == 0 {
		t.Fatalf("no MCPFN_ variables found in %v", readers)
	}
	ttl := regexp.MustCompile(`ttl\[0\]\.attribute_name == "([^"]*)"`)
	p := hclparse.NewParser()
	for _, f := range tftestFiles {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, diags := p.ParseHCL(src, filepath.Base(f)); diags.HasErrors() {
			t.Errorf("%s: %s", f, diags.Error())
		}
		for _, name := range envName.FindAllString(string(src), -1) {
			if !goNames[name] {
				t.Errorf("%s: %s is not read by %v", f, name, read)
			}
		}
		for _, m := range ttl.FindAllStringSubmatch(string(src), -1) {
			if m[1] != dynamo.TTLAttribute {
				t.Errorf("%s: expects the time-to-live attribute %q, store/dynamo's is %q", f, m[1], dynamo.TTLAttribute)
			}
		}
	}
	src, err := os.ReadFile(tftestFiles[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(ttl.FindAllString(string(src), -1)) == 0 {
		t.Errorf("%s does not check the table's time-to-live attribute", tftestFiles[0])
	}
}
