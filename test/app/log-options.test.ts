import t from 'tap'
import { Writable } from 'node:stream'
import { logOptions } from '../../log-options.js'

// The service's log writes each line when it is logged, JSON or for a terminal, so that the
// last lines before an exit come out whole and in order (log-options.ts).

type Options = { level: string, stream: Writable & { sync?: boolean, fd?: number } }

t.test('JSON lines, in production or off a terminal: to stdout, synchronously', async t => {
  for (const [production, terminal] of [[true, false], [true, true], [false, false]] as const) {
    const options = await logOptions({ production, logLevel: 'warn' }, terminal) as Options
    t.equal(options.level, 'warn')
    t.equal(options.stream.fd, 1, `production ${String(production)}, terminal ${String(terminal)}: stdout`)
    t.equal(options.stream.sync, true, 'written when logged')
  }
})

t.test('at a terminal in development: pino-pretty, synchronously', async t => {
  const options = await logOptions({ production: false, logLevel: 'info' }, true) as Options
  t.equal(options.level, 'info')
  t.equal(options.stream.fd, undefined, 'not the JSON destination')
  t.ok(options.stream instanceof Writable, 'a stream pino writes to (pino-pretty)')
})
