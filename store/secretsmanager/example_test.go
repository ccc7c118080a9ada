package secretsmanager_test

import (
	"context"
	"fmt"
	"log"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/store/secretsmanager"
)

// cfg is the function's AWS configuration, which a program loads with
// config.LoadDefaultConfig(ctx) of github.com/aws/aws-sdk-go-v2/config. This
// module does not require that package, so that its users inherit the
// Secrets Manager client and nothing else (docs/design.md, "Module layout").
var cfg aws.Config

// A Lambda function's main reads the signing keys from a secret and fails
// fast when they cannot be loaded.
func ExampleNew() {
	ctx := context.Background()
	keys, err := secretsmanager.New(awssm.NewFromConfig(cfg), "mcpfn/state-keys", nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := keys.Keys(ctx); err != nil {
		log.Fatal(err)
	}
	srv := core.NewServer(core.Implementation{Name: "example", Version: "1.0.0"},
		&core.ServerOptions{Keys: keys})
	_ = srv // lambda.Start(srv), from adapters/lambda
}

// NewSecretString makes the value of a new secret version.
func ExampleNewSecretString() {
	s := secretsmanager.NewSecretString() // {"key":"<44 characters of base64>"}
	v, err := secretsmanager.ParseSecretString(s)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(s), len(v.Key))
	// Output: 54 32
}

func ExampleKeyID() {
	fmt.Println(secretsmanager.KeyID("a1b2c3d4-5678-90ab-cdef-EXAMPLE11111"))
	fmt.Println(len(secretsmanager.KeyID("a version id with spaces")))
	// Output:
	// a1b2c3d4-5678-90ab-cdef-EXAMPLE11111
	// 44
}
