// Runs a command with TEST_DATABASE_URL pointing at a PostgreSQL server: the one given, or
// a throwaway server started here (and stopped after) when the machine has the binaries,
// so `npm test` runs the store suites on PGlite and on a real server alike.
import { spawn } from 'node:child_process'
import { startPostgres } from './postgres.js'

const [cmd, ...args] = process.argv.slice(2)
let server = null
if (process.env.TEST_DATABASE_URL === undefined || process.env.TEST_DATABASE_URL === '') {
  try {
    server = await startPostgres()
    process.env.TEST_DATABASE_URL = server.url
    console.log(`with-postgres: started a throwaway PostgreSQL server at ${server.url}`)
  } catch (err) {
    console.log(`with-postgres: no PostgreSQL server could be started (${err.message.split('\n')[0]}); the server runs of the store suites will be skipped`)
  }
}
const child = spawn(cmd, args, { stdio: 'inherit', env: process.env })
const stop = (signal) => { child.kill(signal) }
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
child.on('exit', (code, signal) => {
  server?.stop()
  process.exit(code ?? (signal === null ? 1 : 128))
})
