// Package secretsmanager is a [core.KeyProvider] that reads the HMAC keys
// sealing requestState (the multi round-trip state of MCP 2026-07-28) from
// one AWS Secrets Manager secret, and rotates them with the secret's
// staging labels. Every instance of a fleet (Lambda, Cloud Run, ...) then
// signs with the same key and verifies what the others sealed.
//
// # Quick start
//
//	cfg, err := config.LoadDefaultConfig(ctx)
//	...
//	keys, err := secretsmanager.New(awssm.NewFromConfig(cfg), "mcpfn/state-keys", nil)
//	...
//	srv := core.NewServer(impl, &core.ServerOptions{Keys: keys})
//
// where awssm is github.com/aws/aws-sdk-go-v2/service/secretsmanager. The
// function's role needs [IAMActions] on the secret.
//
// # Secret format
//
// The SecretString of every version is a JSON object holding one key of at
// least 32 random bytes ([core.MinKeyBytes]) in standard base64 ([SecretValue]):
//
//	{"key":"q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA="}
//
// [NewSecretString] makes one; so does
//
//	printf '{"key":"%s"}' "$(openssl rand -base64 32)"
//
// A version whose value does not parse, or whose key is shorter than 32
// bytes, is an error naming the version when it is AWSCURRENT (the first
// load fails; later, the cached keys stay in use and a warning is logged),
// and is skipped with a warning when it is AWSPENDING or AWSPREVIOUS.
//
// # Keys and key ids
//
//	AWSCURRENT   signs and verifies
//	AWSPENDING   verifies (a rotation in progress)
//	AWSPREVIOUS  verifies (state sealed before the last rotation)
//
// Versions with no staging label are ignored. The key id written into each
// sealed state is [KeyID] of the version id (the version id itself when it
// is a valid key id, as Secrets Manager's UUIDs are), so verification picks
// the key of the version that sealed it.
//
// # Rotation
//
// Put a new version; Secrets Manager moves AWSCURRENT to it and AWSPREVIOUS
// to the version that was current:
//
//	NEW=$(printf '{"key":"%s"}' "$(openssl rand -base64 32)")
//	aws secretsmanager put-secret-value --secret-id mcpfn/state-keys --secret-string "$NEW"
//
// Within RefreshInterval every instance signs with the new key, and state
// sealed with the old one still verifies, since the old version is now
// AWSPREVIOUS. The old key stops verifying when AWSPREVIOUS moves on, at
// the next rotation; space rotations at least core.DefaultStateTTL (the
// state lifetime, 10 minutes) plus RefreshInterval apart, so that no live
// state is orphaned.
//
// During the first RefreshInterval after put-secret-value, instances that
// have not refreshed yet do not know the new key, and reject state sealed
// with it by instances that have. To avoid that window, rotate in two
// steps: stage the new version as AWSPENDING (verified everywhere after one
// RefreshInterval), then promote it:
//
//	aws secretsmanager put-secret-value --secret-id mcpfn/state-keys \
//	    --secret-string "$NEW" --version-stages AWSPENDING
//	# wait RefreshInterval
//	aws secretsmanager update-secret-version-stage --secret-id mcpfn/state-keys \
//	    --version-stage AWSCURRENT --move-to-version-id NEW_VERSION_ID \
//	    --remove-from-version-id OLD_VERSION_ID
//
// (A rotation Lambda following Secrets Manager's four-step protocol does
// the same: createSecret puts the AWSPENDING version, finishSecret
// promotes it.)
//
// # Caching and failures
//
// Keys refreshes lazily, on a Keys call made RefreshInterval or more after
// the last refresh, because Lambda freezes idle instances and a background
// timer would not run. A refresh is one DescribeSecret, plus one
// GetSecretValue per version not seen before; version values are immutable
// and fetched once. Concurrent calls that find the cache stale share one
// refresh. When Secrets Manager is unreachable, the cached keys stay in use
// (a warning is logged, and the next attempt comes after RetryInterval);
// only the very first load fails.
package secretsmanager
