import t from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
// The initializer is plain JavaScript: it runs with no build, and with nothing installed.
import app from '../../create-svc-conventions/templates/app.js'
import { createStore } from '../../store/index.js'

// Written inside this repository, so that `import … from 'svc-conventions'` in the generated
// file names this package (a self-reference), its sources under tap's condition.
const dir = mkdtempSync(join(import.meta.dirname, '.generated-app-'))
const data = mkdtempSync(join(tmpdir(), 'svc-create-app-data-'))
t.teardown(() => {
  rmSync(dir, { recursive: true, force: true })
  rmSync(data, { recursive: true, force: true })
})

t.test('a plugin that refuses to start: buildApp rejects and gives the store back', async (t) => {
  writeFileSync(join(dir, 'app.js'), app({ name: 'generated', typescript: false, esm: true }))
  mkdirSync(join(dir, 'resources'))
  // A boolean named is…: the lint plugin stops the start when the resource's routes are added.
  writeFileSync(join(dir, 'resources', 'index.js'), `import { Type } from '@sinclair/typebox'
import { defineResource } from 'svc-conventions'
export const resources = [defineResource({
  name: 'thing', collection: 'things', path: '/v1/things', idParam: 'thingId',
  fields: { isBig: Type.Boolean() }, scopes: { read: ['things:read'], write: ['things:write'] }
})]
`)
  const { buildApp } = await import(pathToFileURL(join(dir, 'app.js')).href) as { buildApp: (config: object) => Promise<{ close: () => Promise<void> }> }
  const config = { logLevel: 'silent', trustProxy: false, dataDir: data, databaseUrl: undefined, jwtSecret: 'a-test-secret-that-is-long-enough-for-hs256', cursorSecret: ['a-cursor-secret-of-enough-bytes'], corsOrigins: [], rateLimitMax: 1000 }
  await t.rejects(buildApp(config), /svc-lint: .*isBig/s)
  // The data directory is free again: a store that was left open would hold its lock.
  const store = createStore({ dataDir: data })
  t.teardown(() => store.close())
  await t.resolves(store.ready())
})
