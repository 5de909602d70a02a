import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildApp } from '../../app.js'
import { loadConfig } from '../../config.js'
import { createStore, evolveTables } from '../../store/index.js'
import { authors } from '../../routes/v1/authors.js'
import { documents } from '../../routes/v1/documents.js'

// Never a boot that then answers 500: `npm start` on tables that differ from the definitions
// prints every difference with its SQL and exits 1 before listening; with the SQL in a file
// of MIGRATIONS_DIR the service starts and serves.

const serverTs = fileURLToPath(new URL('../../server.ts', import.meta.url))

// Two processes that compile the TypeScript sources, on embedded storage on disk.
t.setTimeout(300_000)

t.test('server.ts refuses a table that differs from its definition before listening; a migration file fixes it', async t => {
  const dir = t.testdir({ migrations: {} })
  const dataDir = join(dir, 'data')
  // The documents table as a service whose definition named the field "title" left it.
  const store = createStore({ dataDir })
  await evolveTables(store, [authors.storage.spec, documents.storage.spec])
  await store.exec('ALTER TABLE documents RENAME COLUMN name TO title')
  await store.close()
  const env = { PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', MIGRATIONS_DIR: join(dir, 'migrations') }

  const refused = spawn(process.execPath, [...process.execArgv, serverTs], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  refused.stdout.on('data', (chunk) => { out += String(chunk) })
  refused.stderr.on('data', (chunk) => { err += String(chunk) })
  const [code] = await once(refused, 'exit') as [number | null]
  t.equal(code, 1)
  t.match(err, /^The tables differ from the resource definitions/)
  t.match(err, '- table "documents", column "title": in the table but not in the definition, which has a new field "name" of the same type')
  t.match(err, '\n    ALTER TABLE "documents" RENAME COLUMN "title" TO "name";\n')
  t.notMatch(out, /listening/i)

  writeFileSync(join(dir, 'migrations', '0001_rename_title.sql'), 'ALTER TABLE IF EXISTS "documents" RENAME COLUMN "title" TO "name";\n')
  const app = await buildApp(loadConfig(env).config)
  t.teardown(() => app.close())
  t.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200, 'MIGRATIONS_DIR\'s file ran, and the tables match')
})
