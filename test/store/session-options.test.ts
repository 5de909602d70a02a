import t from 'tap'
import fc from 'fast-check'
import { parse } from 'pg-connection-string'
import { createStore } from '../../store/index.js'
import { sessionOptions } from '../../store/session-options.js'
import { TEST_DATABASE_URL } from '../support/databases.js'

// pg lets a URL's `options` parameter replace the `options` given beside it: the store's own
// settings (statement timeout, TimeZone) were dropped. They now follow the URL's.

const OWN = ['-c TimeZone=UTC', '-c statement_timeout=30000']

t.test('the URL\'s options first, the store\'s after; the rest of the URL as written', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['postgres://u@h/db', 'postgres://u@h/db', '-c TimeZone=UTC -c statement_timeout=30000'],
    ['postgres://u@h/db?sslmode=verify-full', 'postgres://u@h/db?sslmode=verify-full', '-c TimeZone=UTC -c statement_timeout=30000'],
    ['postgres://u@h/db?options=-c%20search_path%3Dapp', 'postgres://u@h/db', '-c search_path=app -c TimeZone=UTC -c statement_timeout=30000'],
    ['postgres://u:p%40ss@h:5433/db?sslmode=require&options=-c+search_path%3Dapp&application_name=x', 'postgres://u:p%40ss@h:5433/db?sslmode=require&application_name=x', '-c search_path=app -c TimeZone=UTC -c statement_timeout=30000'],
    // As pg reads it: the last one counts.
    ['postgres://h/db?options=-c%20a%3D1&options=-c%20b%3D2', 'postgres://h/db', '-c b=2 -c TimeZone=UTC -c statement_timeout=30000'],
    ['postgres://h/db?options=', 'postgres://h/db', '-c TimeZone=UTC -c statement_timeout=30000'],
    ['postgres://h/db?', 'postgres://h/db?', '-c TimeZone=UTC -c statement_timeout=30000'],
    ['postgres:///db?host=/var/run/postgresql&options=-c%20x%3D1', 'postgres:///db?host=/var/run/postgresql', '-c x=1 -c TimeZone=UTC -c statement_timeout=30000']
  ]
  for (const [url, connectionString, options] of cases) t.strictSame(sessionOptions(url, OWN), { connectionString, options }, url)
})

t.test('pg reads the same URL less its options, and the options it held come first (property)', async (t) => {
  const value = fc.stringMatching(/^[A-Za-z0-9 =%_./:+-]{0,12}$/)
  const param = fc.tuple(fc.constantFrom('sslmode', 'application_name', 'options', 'host', 'connect_timeout'), value)
  fc.assert(fc.property(fc.array(param, { maxLength: 5 }), (params) => {
    const query = params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')
    const url = `postgres://user:pw@db.example:5432/app${query === '' ? '' : `?${query}`}`
    const got = sessionOptions(url, OWN)
    const { options: theirs, ...before } = parse(url)
    const { options: none, ...after } = parse(got.connectionString)
    t.equal(none, undefined)
    t.strictSame(after, before)
    t.equal(got.options, [theirs?.trim() ?? '', ...OWN].filter((o) => o !== '').join(' '))
  }), { numRuns: 300 })
})

t.test('on a server, the URL\'s settings and the store\'s both hold', { skip: TEST_DATABASE_URL === undefined ? 'needs TEST_DATABASE_URL' : false }, async (t) => {
  const url = new URL(TEST_DATABASE_URL as string)
  url.searchParams.set('options', '-c application_name=svc-options-test -c statement_timeout=99999 -c TimeZone=America/New_York')
  const store = createStore({ databaseUrl: url.toString(), pool: { statementTimeoutMillis: 1234 } })
  t.teardown(() => store.close())
  const settings = "SELECT current_setting('application_name') AS app, current_setting('statement_timeout') AS timeout, current_setting('TimeZone') AS tz"
  t.strictSame((await store.query(settings)).rows, [{ app: 'svc-options-test', timeout: '1234ms', tz: 'UTC' }], 'the pool\'s connections')
  // The listening connection is made the same way.
  await store.listen('svc_options_test', () => {})
  const listening = await store.query<{ app: string }>("SELECT application_name AS app FROM pg_stat_activity WHERE query LIKE 'LISTEN%svc_options_test%'")
  t.strictSame(listening.rows, [{ app: 'svc-options-test' }], 'the listener\'s')
})
