import t from 'tap'
import { buildStore } from '../../store/base.js'
import type { Driver } from '../../store/driver.js'
import { SerializationFailure, StoreError, Unavailable, type StoreLogger } from '../../store/index.js'
import type { IsolationLevel, Queryable } from '../../store/types.js'

// The engine-independent layer, over a fake driver that records what it is asked.

interface Recorder { driver: Driver, log: string[] }

function fake (overrides: Partial<Driver> = {}): Recorder {
  const log: string[] = []
  const session: Queryable = {
    async query (sql) { log.push(sql); return { rows: [], rowCount: 0 } },
    async exec (sql) { log.push(sql) }
  }
  const driver: Driver = {
    kind: 'pglite',
    query: session.query,
    exec: session.exec,
    async transaction (isolation: IsolationLevel, fn) {
      log.push(`BEGIN ${isolation}`)
      try {
        const result = await fn(session)
        log.push('COMMIT')
        return result
      } catch (err) {
        log.push('ROLLBACK')
        throw err
      }
    },
    async listen (channel) {
      log.push(`LISTEN ${channel}`)
      return async () => { log.push(`UNLISTEN ${channel}`) }
    },
    async close () { log.push('close') },
    ...overrides
  }
  return { driver, log }
}

const silent: StoreLogger = { info () {}, warn () {}, error () {} }

t.test('transactions pass the isolation level, default read committed', async (t) => {
  const { driver, log } = fake()
  const store = buildStore(driver, silent)
  await store.transaction(async () => {})
  await store.transaction(async () => {}, { isolation: 'serializable' })
  t.strictSame(log, ['BEGIN read committed', 'COMMIT', 'BEGIN serializable', 'COMMIT'])
})

t.test('savepoint statements', async (t) => {
  const { driver, log } = fake()
  const store = buildStore(driver, silent)
  await store.transaction(async (tx) => {
    await tx.savepoint(async (sp) => { await sp.query('A') })
    await tx.savepoint(async () => { throw new Error('no') }).catch(() => {})
    await tx.savepoint(async (sp) => { await sp.savepoint(async (inner) => { await inner.exec('B') }) })
  })
  t.strictSame(log, [
    'BEGIN read committed',
    'SAVEPOINT svc_sp_1', 'A', 'RELEASE SAVEPOINT svc_sp_1',
    'SAVEPOINT svc_sp_2', 'ROLLBACK TO SAVEPOINT svc_sp_2; RELEASE SAVEPOINT svc_sp_2',
    'SAVEPOINT svc_sp_3', 'SAVEPOINT svc_sp_4', 'B', 'RELEASE SAVEPOINT svc_sp_4', 'RELEASE SAVEPOINT svc_sp_3',
    'COMMIT'
  ])
})

t.test('each retry is logged, then the function runs in a new transaction', async (t) => {
  const warnings: object[] = []
  const { driver, log } = fake()
  const store = buildStore(driver, { ...silent, warn (obj) { warnings.push(obj) } })
  let attempts = 0
  const value = await store.transaction(async () => {
    attempts++
    if (attempts < 3) throw new SerializationFailure({ sqlState: attempts === 1 ? '40001' : '40P01' })
    return 'done'
  }, { retries: 5 })
  t.equal(value, 'done')
  t.strictSame(warnings, [{ attempt: 1, retries: 5, sqlState: '40001' }, { attempt: 2, retries: 5, sqlState: '40P01' }])
  t.strictSame(log, ['BEGIN read committed', 'ROLLBACK', 'BEGIN read committed', 'ROLLBACK', 'BEGIN read committed', 'COMMIT'])
})

t.test('ready() reports any failure as Unavailable', async (t) => {
  const down = new Unavailable()
  const a = buildStore(fake({ query: async () => { throw down } }).driver, silent)
  t.equal(await a.ready().catch((e: unknown) => e), down, 'an Unavailable as it is')
  const odd = new StoreError('odd')
  const b = buildStore(fake({ query: async () => { throw odd } }).driver, silent)
  const err = await b.ready().catch((e: unknown) => e)
  t.ok(err instanceof Unavailable)
  t.equal((err as Error).cause, odd)
  await t.resolves(buildStore(fake().driver, silent).ready())
})

t.test('close() waits for work in flight, even work that fails, before closing the driver', async (t) => {
  let finish = (): void => {}
  let fail = (): void => {}
  const { driver, log } = fake({
    query: async () => await new Promise((resolve) => { finish = () => { log.push('query done'); resolve({ rows: [], rowCount: 0 }) } }),
    exec: async () => { await new Promise<void>((_resolve, reject) => { fail = () => { log.push('exec failed'); reject(new Error('x')) } }) }
  })
  const store = buildStore(driver, silent)
  const q = store.query('SELECT 1')
  const e = store.exec('SELECT 1').catch(() => 'failed')
  const closing = store.close()
  await new Promise((resolve) => setImmediate(resolve))
  t.strictSame(log, [], 'the driver is not closed yet')
  fail()
  finish()
  await closing
  t.strictSame(log, ['exec failed', 'query done', 'close'])
  t.strictSame(await q, { rows: [], rowCount: 0 })
  t.equal(await e, 'failed')
  await t.rejects(store.exec('SELECT 1'), { name: 'Unavailable', message: 'The store is closed.' })
})

t.test('listen() checks its arguments, and its stop does nothing once the store closed', async (t) => {
  const { driver, log } = fake()
  const store = buildStore(driver, silent)
  await t.rejects(store.listen('', () => {}), TypeError, 'an empty channel')
  await t.rejects(store.listen('x'.repeat(64), () => {}), TypeError, 'a channel longer than an identifier')
  await t.rejects(store.listen('jobs', 'wake' as unknown as () => void), /onNotify must be a function/)
  const stop = await store.listen('jobs', () => {})
  const other = await store.listen('event_deliveries', () => {})
  await stop()
  await store.close()
  await other()
  t.strictSame(log, ['LISTEN jobs', 'LISTEN event_deliveries', 'UNLISTEN jobs', 'close'], 'no UNLISTEN after close: the connections are gone')
  await t.rejects(store.listen('jobs', () => {}), { name: 'Unavailable', message: 'The store is closed.' })
})
