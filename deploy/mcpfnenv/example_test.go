package mcpfnenv_test

import (
	"fmt"
	"os"

	"github.com/mcpfn/mcpfn/deploy/mcpfnenv"
)

// A kit reads the shared variables into the server's options.
func Example() {
	os.Setenv("MCPFN_ALLOWED_ORIGINS", "https://app.example.com")
	os.Setenv("MCPFN_TASK_CLAIM_TIMEOUT", "300")
	origins, err := mcpfnenv.AllowedOrigins()
	if err != nil {
		fmt.Println(err)
		return
	}
	claim, err := mcpfnenv.Duration("MCPFN_TASK_CLAIM_TIMEOUT")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(origins, claim)
	// Output: [https://app.example.com] 5m0s
}
