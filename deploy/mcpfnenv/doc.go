// Package mcpfnenv reads the MCPFN_* environment variables that every
// deploy kit (deploy/lambdaenv, deploy/gcfenv) shares, with one error
// message per variable that names it and says what it takes, so that a
// function misconfigured by its Terraform or its console fails at start-up
// with the reason instead of serving wrongly.
//
// A kit for another platform reads the same variables the same way by
// calling these functions; the platform's own variables stay the kit's.
package mcpfnenv
