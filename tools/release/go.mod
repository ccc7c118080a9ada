module github.com/mcpfn/mcpfn/tools/release

go 1.26

require golang.org/x/mod v0.36.0
