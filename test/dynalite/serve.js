// serve.js starts dynalite (an in-memory DynamoDB-compatible server) on a free
// loopback port and prints the line
//
//   export MCPFN_DYNAMODB_ENDPOINT=http://127.0.0.1:PORT
//
// once it accepts connections. It runs until SIGTERM or SIGINT. start.sh runs
// it; run it by hand as `node serve.js DYNALITE_MODULE_DIR`.
'use strict'

const dir = process.argv[2]
if (!dir) {
  console.error('usage: node serve.js DYNALITE_MODULE_DIR')
  process.exit(2)
}
const dynalite = require(dir)

// Tables stay CREATING for a few milliseconds, not dynalite's default 500, so
// that a test that creates a table per case stays fast while still waiting
// for ACTIVE as it must against DynamoDB.
const server = dynalite({ createTableMs: 20, deleteTableMs: 20, updateTableMs: 20 })

// dynalite's request handler rethrows a request's errors (req.on('error',
// err => { throw err })): a client that goes away mid-request (a process
// killed while it reads or writes, as test/replicas does) would end this
// process, and every other client's table with it. Such an error concerns
// that one request: log it and keep serving; anything else still ends the
// process.
process.on('uncaughtException', (err) => {
  if (err && err.code === 'ECONNRESET' && err.message === 'aborted') {
    console.error(`dynalite: a client aborted its request (${err.message})`)
    return
  }
  console.error(err)
  process.exit(1)
})

server.listen(Number(process.env.MCPFN_DYNALITE_PORT || 0), '127.0.0.1', () => {
  const { port } = server.address()
  console.log(`export MCPFN_DYNAMODB_ENDPOINT=http://127.0.0.1:${port}`)
})

function stop () {
  server.close(() => process.exit(0))
  setTimeout(() => process.exit(0), 2000).unref()
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
