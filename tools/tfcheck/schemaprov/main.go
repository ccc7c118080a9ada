// Command schemaprov is the tfcheck schema provider: one binary that serves,
// under the plugin protocol version 5, as hashicorp/aws or hashicorp/random
// (by the name it is run as, terraform-provider-NAME_...), with the real
// providers' schemas for the types this repository uses (schemas/*.json) and
// their validators for the attributes it sets (schemas/validators.txt). It
// stands in for the real providers in tfcheck's fast stage, which checks
// configurations offline: validate, plan on a fresh state, and tofu test
// with mock providers; tfcheck's full stage builds the real providers and
// checks that they agree with these files.
//
//	schemaprov trim ADDRESS KIND:TYPE... < schema.json
//
// prints the trimmed schema of one provider from `tofu providers schema -json`
// (how schemas/*.json are made);
//
//	schemaprov validator-config DIR
//	schemaprov validator-report < validate.json
//
// write a configuration with one block per value of each line of
// validators.txt, and judge `tofu validate -json` of it (gen.go).
package main

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tfprotov5"
	"github.com/hashicorp/terraform-plugin-go/tfprotov5/tf5server"
)

//go:embed schemas/aws.json
var awsSchema []byte

//go:embed schemas/random.json
var randomSchema []byte

//go:embed schemas/validators.txt
var validatorsTxt []byte

func providerName(arg0 string) string {
	base := strings.TrimPrefix(filepath.Base(arg0), "terraform-provider-")
	name, _, _ := strings.Cut(base, "_")
	return name
}

func newNamed(name string) (*server, error) {
	switch name {
	case "aws":
		return newServer("aws", awsSchema, validatorsTxt)
	case "random":
		return newServer("random", randomSchema, validatorsTxt)
	}
	return nil, fmt.Errorf("schemaprov: run as terraform-provider-aws or terraform-provider-random, not %q", name)
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "validator-config" {
		if err := validatorConfig(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) == 2 && os.Args[1] == "validator-report" {
		wrong, err := report(os.Stdin, os.Stdout)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, w := range wrong {
			fmt.Fprintln(os.Stderr, "validators: FAIL "+w)
		}
		if len(wrong) > 0 {
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 2 && os.Args[1] == "trim" {
		out, err := trim(os.Stdin, os.Args[2], os.Args[3:])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		_, _ = os.Stdout.Write(out)
		return
	}
	name := providerName(os.Args[0])
	s, err := newNamed(name)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := tf5server.Serve("registry.terraform.io/hashicorp/"+name, func() tfprotov5.ProviderServer { return s }); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
