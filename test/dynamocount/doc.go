// Package dynamocount holds tests that count the DynamoDB calls a
// core.Server makes on store/dynamo per kind of request (the budget of
// core.SessionStore: at most one read and one write per ordinary legacy
// request, none for a 2026-07-28 request), and a benchmark of a legacy
// tools/call on the in-memory store against dynalite. They need dynalite:
//
//	test/dynalite/with.sh go test -v ./test/dynamocount/
//	test/dynalite/with.sh go test -run '^$' -bench . ./test/dynamocount/
//
// The measured numbers are in test/replicas/README.md.
package dynamocount
