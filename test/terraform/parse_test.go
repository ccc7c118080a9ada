package terraform_test

import (
	"testing"

	"github.com/hashicorp/hcl/v2/hclparse"
)

// TestParse parses every .tf file under infra/terraform and
// test/terraform/fixtures. Formatting is terraform fmt's job (check.sh).
func TestParse(t *testing.T) {
	t.Parallel()
	files := append(tfFiles(t, terraformDir), tfFiles(t, "fixtures")...)
	p := hclparse.NewParser()
	for _, f := range files {
		if _, diags := p.ParseHCLFile(f); diags.HasErrors() {
			t.Errorf("%s", diags.Error())
		}
	}
	t.Logf("parsed %d files", len(files))
}
