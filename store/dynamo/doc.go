// Package dynamo is a [core.SessionStore] on Amazon DynamoDB, for legacy MCP
// sessions (protocol revisions before 2026-07-28) served from AWS Lambda or
// any other fleet where consecutive requests reach different instances, and
// a [core.TaskStore] ([TaskStore]) for the tasks of the Tasks extension
// (io.modelcontextprotocol/tasks), in the same table.
//
// The signing keys of requestState live in package store/secretsmanager;
// package store/memory has the in-process stores for a single instance.
//
// # Quick start
//
//	cfg, err := config.LoadDefaultConfig(ctx)
//	...
//	sessions, err := dynamo.New(dynamodb.NewFromConfig(cfg), &dynamo.Options{TableName: "mcpfn-sessions"})
//	...
//	srv := core.NewServer(impl, &core.ServerOptions{SessionStore: sessions})
//
// Provision the table with Terraform from the schema below (the constants of
// this package and [TableInput] are the reference), or call [CreateTable].
// The Lambda role needs [IAMActions] on the table and on its indexes
// (arn:aws:dynamodb:REGION:ACCOUNT:table/NAME and .../index/*).
//
// # Table
//
// One table, on-demand billing (PAY_PER_REQUEST), one item per session, no
// sort key, one global secondary index:
//
//	attribute  type  role
//	pk         S     table partition key: "s#" + session id
//	pool       S     PoolIndex partition key: "p#" + principal, or "a#" + shard for anonymous sessions
//	lu         N     PoolIndex sort key: LastUsed, Unix ms
//	exp        N     Expires, Unix ms, projected into PoolIndex; checked by every operation
//	ttl        N     Expires, Unix s rounded up; the table's time-to-live attribute
//	ver        N     Version, the optimistic-concurrency counter
//	data       B     Data (absent when empty)
//	prn        S     Principal (absent for anonymous sessions)
//	wid        S     random token of the last write (see Retries)
//
// Get, Update and Delete address the item by its key, derived from the
// session id alone, so each is a single-item operation. Eviction finds a
// pool's least recently used sessions by querying PoolIndex on the pool,
// never by scanning the table.
//
// # Calls per operation
//
//	Get     1 GetItem (strongly consistent)
//	Update  1 UpdateItem (conditional); see Failed writes for a failed one
//	Delete  1 DeleteItem (conditional)
//	Create  1 PutItem (conditional); with a limit on the pool, also 1 Query
//	        (1 page per MB of index data, some 10,000 sessions; one shard of
//	        the anonymous pool or one principal's pool fits one page) and 1 DeleteItem per evicted session (0 or 1 in
//	        the steady state). A full pool thus costs 3 calls.
//
// # Expiry
//
// Every operation compares [ExpiresAttribute] with the clock, in its
// condition expression (Update, Delete, Create over an old id, eviction's
// filter) or after the read (Get), so an expired session is absent at the
// millisecond even though DynamoDB deletes items whose time to live passed
// only eventually (usually within days), and emulators never. [TTLAttribute]
// only reclaims the storage.
//
// # Failed writes
//
// Update is one UpdateItem with the condition "version = expected AND
// expires > now": a write that fails changes nothing, and concurrent
// writers never lose an update. It asks for the old item with
// ReturnValuesOnConditionCheckFailure=ALL_OLD, and tells the failures apart
// with it: no item or an expired one is [core.ErrSessionNotFound], a live
// one [core.ErrSessionConflict]. DynamoDB returns the item; some emulators
// (dynalite) ignore the parameter. So, until a process has seen one
// failure that carried the item, a failure without one is classified with
// one strongly consistent GetItem; on DynamoDB that read happens at most
// for the first Updates of missing sessions in each process.
//
// # Retries
//
// Every write stores a random token ([WriteAttribute]). When a write is
// retried after its first attempt landed but its answer was lost (the SDK
// retries timeouts and 5xx, and the Store retries throttling when
// Options.MaxAttempts allows), the retry's condition fails on the item the
// first attempt wrote; the Store recognises its own token and reports
// success, instead of a false conflict that would make the caller apply its
// change twice.
//
// # Eviction and concurrency
//
// Create writes the session first, then reads the pool from PoolIndex, and
// deletes the least recently used sessions beyond the limit, each with the
// condition that its last use is still the one read: a session used
// meanwhile is spared. The new session is never evicted. Since each Create
// reads the pool after its own write, the last of several concurrent
// Creates sees all their sessions and trims the pool to the limit. Two
// approximations remain, both in the direction of keeping a session:
//
//   - A global secondary index is eventually consistent (DynamoDB offers no
//     strongly consistent reads on it, so the Query cannot ask for one): a
//     session written a fraction of a second earlier may be missing from
//     the Query, and the pool may exceed its limit by the sessions created
//     in that window until the next Create in the pool.
//   - An eviction that fails (throttling) is logged and left to the next
//     Create; Create still succeeds, since its session is stored.
//
// No transactions are used (they are not needed, and dynalite lacks them).
//
// # The anonymous pool
//
// The anonymous pool is large (10,000 sessions by default), and reading all
// of it on every Create would cost some 1 MB of index reads. The Store
// therefore splits it into ceil(Anonymous/AnonymousShardSize) shards
// (default shard size 1000, so 10 shards of 1000) by a hash of the session
// id, and enforces ceil(Anonymous/shards) per shard. A Create reads one
// shard, about 100 KB, in one Query. The cost: the limit holds per shard, so
// the total may reach shards*ceil(Anonymous/shards) (exactly Anonymous when
// it divides evenly), and the session evicted is the least recently used
// of its shard, not of the whole pool. Sharding also spreads anonymous
// writes over several index partitions. With Anonymous at most the shard
// size there is one shard and eviction is exact. All instances sharing a
// table must use the same limits and shard size, or they use different
// shards.
//
// Pools of principals are not sharded: their limit is small (100 by
// default).
//
// # Errors
//
// Errors are wrapped with the operation ("dynamo: get session: ..."). The
// sentinels [core.ErrSessionNotFound] and [core.ErrSessionConflict] are
// returned as described above; DynamoDB's own errors (throttling, a
// missing table as *types.ResourceNotFoundException, timeouts) pass
// through, wrapped, for errors.As. An item this package did not write gives
// a "malformed item" error, never a panic.
//
// # Tasks
//
// [NewTaskStore] returns a core.TaskStore on the session table: no second
// table, no other IAM action. Its items have key prefixes of their own and
// neither the pool nor the last-use attribute, so PoolIndex (a sparse
// index) never lists them and no session operation can address them (each
// derives its key from "s#" and the id); an item of one kind stored under
// the other's key reads as a malformed item, never as a record.
//
//	item        pk                          attributes
//	task        "t#" + task id              ver, exp, ttl, st, prn, tc, wid, data
//	task count  "tc#p#" + principal + "#" + shard,
//	            "tc#a#" + shard (anonymous)  ver, tasks, ttl, wid
//	change log  "c#" + Options.ChangeLog      cpos, chg ([NewChangeBus])
//
// A task item holds the whole core.TaskRecord as JSON in data (B, its field
// tags; ver is authoritative for Version); exp, ttl, prn and wid are the
// session items' attributes with the same meaning; st is the status, tc the
// task-count item that counted it. A task-count item maps the ids of the
// unexpired tasks it counts to their expiry (Unix ms) as of Create.
//
// Every transition is conditional and every read strongly consistent:
//
//	Create  with a limit: GetItem (consistent) of the task-count item and
//	        PutItem of it conditioned on "ver = read" (or "no item"),
//	        refusing with core.ErrTaskLimit when it already holds its share
//	        of unexpired entries (expired ones are dropped in the same
//	        write); again, after a jittered pause, when a concurrent Create
//	        won (at most 64 rounds). Then PutItem of the task item
//	        conditioned on "attribute_not_exists(pk) OR exp <= now"; a
//	        refusal (id in use: core.ErrTaskConflict) takes the count back
//	        with one UpdateItem conditioned on the entry being its own.
//	        Without a limit: the PutItem alone. 1 call, or 3 (4 on a
//	        conflict).
//	Get     1 GetItem (ConsistentRead): a task Create returned is found by
//	        the next Get on any instance (tasks.md §Task Creation, "durably
//	        created"); exp <= now is core.ErrTaskNotFound.
//	Update  1 UpdateItem setting every attribute but pk and tc, conditioned
//	        on "ver = rec.Version AND exp > now"; failures are told apart
//	        as for sessions (see Failed writes): core.ErrTaskNotFound for a
//	        missing or expired item, core.ErrTaskConflict for a live one.
//
// Counting and inserting are thus one atomic step per task-count item:
// concurrent Creates of a principal on any number of instances never
// exceed the limit (TestTaskLimitIsAtomic: 24 concurrent Creates on two
// Stores, limit 5: exactly 5 succeed). A limit above
// Options.TaskShardSize (default 100) is split into
// ceil(limit/TaskShardSize) task-count items by a hash of the task id,
// each holding ceil(limit/shards) (DefaultMaxAnonymousTasks, 1000: 10
// items of 100), so that an item stays near 6 KB and a Create reads and
// writes one; the bound then holds per shard, as for the anonymous session
// pool. A count keeps the task's expiry at Create: an Update that extends
// Expires does not extend its count. A count whose task item was never
// written (a timeout after the count) lapses at that expiry: the bound
// errs on the side of refusing. Transactions (TransactWriteItems) would
// make the two writes one, but dynalite lacks them and the count item
// makes them unnecessary.
//
// Size: a record whose item would exceed [MaxItemBytes] (400 KB, the sum of
// attribute name and value lengths, as DynamoDB counts it) is refused with
// core.ErrTaskTooLarge before any call; DynamoDB's own refusal of an
// oversized item (ValidationException) is mapped to the same error. core
// bounds a result at core.DefaultMaxTaskResultBytes (256 KB) so that
// completing a task fits.
//
// Expiry: as for sessions, exp is compared with the clock in every
// condition and after every read; ttl only reclaims the storage (task-count
// items carry the ttl of their latest entry).
//
// Retries: both writes of Create and Update carry a write token (wid), so
// a write retried after its first attempt landed is recognised.
//
// # Change notifications
//
// [NewChangeBus] returns a core.ChangeBus on the session table: one item
// per log ("c#" + Options.ChangeLog, "default" unless set) holding the
// position of the next change (cpos) and the last Options.ChangeLogSize
// changes (chg; 100 unless set, at most 150 so that the item stays far
// below DynamoDB's 400 KB with URIs of core.MaxChangeURIBytes). Publish is
// a consistent GetItem and a PutItem conditioned on the position read,
// again on a lost race (at most 8 rounds); Read is one consistent GetItem.
// Each instance holding streams reads once per
// core.ServerOptions.ChangePollInterval, so reads grow with instances, not
// with streams. The IAM actions are the sessions' (GetItem, PutItem).
//
// # Testing
//
// The tests of this package run against dynalite, a DynamoDB-compatible
// server: test/dynalite/start.sh installs and starts it and prints the
// MCPFN_DYNAMODB_ENDPOINT they read; without it they skip, unless
// MCPFN_REQUIRE_DYNAMO=1.
package dynamo
