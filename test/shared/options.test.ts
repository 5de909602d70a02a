import t from 'tap'
import Fastify, { type FastifyPluginAsync } from 'fastify'
import problem from '../../plugins/problem/index.js'
import methods from '../../plugins/methods/index.js'
import lint from '../../plugins/lint/index.js'
import openapi from '../../plugins/openapi/index.js'
import docs from '../../plugins/docs/index.js'
import { closestKey, MAX_TIMER_MILLIS, optionChecks, refuseUnknownOptions, shownValue, TIMER_MILLIS_RULE } from '../../plugins/shared/options.js'

// Every plugin refuses an option key it does not know, naming the key, the one probably meant
// and all it knows (each plugin's own test has its cases; these are the plugins with no other
// option table, and the helper itself).

t.test('closestKey: the known key a slip of the keyboard away, or none', async t => {
  const known = ['origins', 'methods', 'maxAge', 'credentials', 'userAgent', 'ajv']
  const table: Array<[string, string | undefined]> = [
    ['origin', 'origins'],
    ['Origins', 'origins'],
    ['mehtods', 'methods'],
    ['maxage', 'maxAge'],
    ['credential', 'credentials'],
    ['userAgnt', 'userAgent'],
    ['ajvv', 'ajv'],
    ['aj', 'ajv'],
    ['preflight', undefined],
    ['x', undefined]
  ]
  for (const [key, expected] of table) t.equal(closestKey(key, known), expected, key)
})

t.test('refuseUnknownOptions: objects of known keys, and Fastify\'s register keys, pass', async t => {
  const known = { a: true, bee: true } as const
  t.doesNotThrow(() => { refuseUnknownOptions('x', { a: 1, prefix: '/p', logLevel: 'info', logSerializers: {} }, known) })
  t.throws(() => { refuseUnknownOptions('x', { toString: 1 }, known) }, /unknown option toString/, 'only own keys are known')
  t.throws(() => { refuseUnknownOptions('x', { prefix: '/p' }, known, { path: 'nested.' }) }, /^x plugin: unknown option nested\.prefix; nested takes a, bee$/, 'register keys are the plugin\'s own only')
  t.throws(() => { refuseUnknownOptions('x', null, known) }, /^x plugin: the options must be an object, got null$/)
  t.throws(() => { refuseUnknownOptions('x', [], known, { where: 'route GET /: ', path: 'config.x.' }) }, /^x plugin: route GET \/: config\.x must be an object, got \[\]$/)
  t.throws(() => { refuseUnknownOptions('x', undefined, known) }, /got undefined$/)
})

t.test('the plugins without an option table of their own refuse unknown keys', async t => {
  const table: Array<[string, FastifyPluginAsync<never>, unknown, RegExp]> = [
    ['methods', methods as never, { option: false }, /^methods plugin: unknown option option \(did you mean options\?\); the options are options$/],
    ['lint', lint as never, { rule: {} }, /^lint plugin: unknown option rule \(did you mean rules\?\); the options are mode, rules, openapi$/],
    ['docs', docs as never, { routPrefix: '/d' }, /^docs plugin: unknown option routPrefix \(did you mean routePrefix\?\); the options are routePrefix, title$/]
  ]
  for (const [name, plugin, opts, message] of table) {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(problem)
    if (name === 'docs') await app.register(openapi)
    await t.rejects(async () => { await app.register(plugin, opts as never) }, { name: 'TypeError', message }, name)
  }
  const prefixed = Fastify()
  t.teardown(() => prefixed.close())
  await prefixed.register(problem)
  await t.resolves(async () => { await prefixed.register(methods, { prefix: '/api', options: true } as never) }, 'register keys reach the plugin too, and pass')
})

t.test('optionChecks: every boot error reads <owner>: <option> must be <rule>, got <value>', async t => {
  const { fail, positiveInteger } = optionChecks('things plugin')
  t.throws(() => fail('path', 'x', 'an absolute path'), { name: 'TypeError', message: 'things plugin: path must be an absolute path, got "x"' })
  t.throws(() => positiveInteger('max', 0), { message: 'things plugin: max must be a positive integer, got 0' })
  t.throws(() => positiveInteger('max', '5', 'a positive integer of milliseconds'), { message: 'things plugin: max must be a positive integer of milliseconds, got "5"' })
  t.equal(positiveInteger('max', 5), 5)
})

t.test('optionChecks.timerMillis: milliseconds a timer can wait, up to 2147483647', async t => {
  const { timerMillis } = optionChecks('things plugin')
  const rule = 'a positive integer of milliseconds up to 2147483647 (about 24.8 days, the longest a timer waits)'
  t.equal(MAX_TIMER_MILLIS, 2 ** 31 - 1)
  t.equal(TIMER_MILLIS_RULE, rule)
  const cases: Array<[unknown, string | undefined, string | null]> = [
    [1, undefined, null],
    [2147483647, undefined, null],
    [2147483648, undefined, `things plugin: pollMillis must be ${rule}, got 2147483648`],
    [3e9, undefined, `things plugin: pollMillis must be ${rule}, got 3000000000`],
    [0, undefined, `things plugin: pollMillis must be ${rule}, got 0`],
    [1.5, undefined, `things plugin: pollMillis must be ${rule}, got 1.5`],
    ['5', undefined, `things plugin: pollMillis must be ${rule}, got "5"`],
    [Infinity, undefined, `things plugin: pollMillis must be ${rule}, got Infinity`],
    [0, 'never', null],
    [2147483647, 'never', null],
    [2147483648, 'never', `things plugin: pollMillis must be 0 (never) or ${rule}, got 2147483648`],
    [-1, 'never', `things plugin: pollMillis must be 0 (never) or ${rule}, got -1`]
  ]
  for (const [value, zero, refusal] of cases) {
    const name = `${shownValue(value)}${zero === undefined ? '' : ', 0 allowed'}`
    if (refusal === null) t.equal(timerMillis('pollMillis', value, zero), value, name)
    else t.throws(() => timerMillis('pollMillis', value, zero), { name: 'TypeError', message: refusal }, name)
  }
})

t.test('MAX_TIMER_MILLIS is the longest delay Node waits: one more is taken as 1 ms, with a warning', async t => {
  const warnings: string[] = []
  const onWarning = (w: Error): void => { warnings.push(w.name) }
  process.on('warning', onWarning)
  t.teardown(() => { process.off('warning', onWarning) })
  clearTimeout(setTimeout(() => {}, MAX_TIMER_MILLIS))
  await new Promise((resolve) => setImmediate(resolve))
  t.strictSame(warnings, [], 'the longest: no warning')
  clearTimeout(setTimeout(() => {}, MAX_TIMER_MILLIS + 1))
  await new Promise((resolve) => setImmediate(resolve))
  t.strictSame(warnings, ['TimeoutOverflowWarning'], 'one more: overflows')
})

t.test('shownValue: a value as a boot error quotes it', async t => {
  const cycle: Record<string, unknown> = {}
  cycle.self = cycle
  const cases: Array<[unknown, string]> = [
    ['text', '"text"'],
    [1.5, '1.5'],
    [NaN, 'NaN'],
    [-Infinity, '-Infinity'],
    [undefined, 'undefined'],
    [null, 'null'],
    [[1, 'a'], '[1,"a"]'],
    [{ a: 1 }, '{"a":1}'],
    [/^a$/, '/^a$/'],
    [() => 1, 'a function'],
    [10n, '10'],
    [cycle, '[object Object]']
  ]
  for (const [value, shown] of cases) t.equal(shownValue(value), shown, shown)
})
