import t from 'tap'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { lintCommand, type LintIo } from '../../bin/lint.js'
import { formatReport } from '../../plugins/lint/report.js'

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))

function capture (files: Record<string, string> = {}): LintIo & { stdout: string[], stderr: string[] } {
  const stdout: string[] = []
  const stderr: string[] = []
  return {
    stdout,
    stderr,
    out: (line) => { stdout.push(line) },
    err: (line) => { stderr.push(line) },
    readFile: async (path) => {
      const text = files[path]
      if (text === undefined) throw new Error(`ENOENT: no such file, open '${path}'`)
      return text
    }
  }
}

t.test('exit codes and output', async t => {
  const io = capture({ 'ok.json': '{"openapi":"3.1.0","paths":{}}', 'bad.json': '{"openapi":', 'v2.json': '{"swagger":"2.0"}', 'null.json': 'null' })
  t.equal(await lintCommand(['lint', 'ok.json'], io), 0)
  t.same(io.stdout, ['svc-lint: no violations'])
  t.equal(await lintCommand(['lint', 'missing.json'], io), 2)
  t.match(io.stderr.pop(), /cannot read missing\.json as JSON: ENOENT/)
  t.equal(await lintCommand(['lint', 'bad.json'], io), 2)
  t.match(io.stderr.pop(), /cannot read bad\.json as JSON/)
  t.equal(await lintCommand(['lint', 'v2.json'], io), 2)
  t.match(io.stderr.pop(), /is not an OpenAPI 3\.x document/)
  t.equal(await lintCommand(['lint', 'null.json'], io), 2)
  const malformed = [[], ['check', 'ok.json'], ['lint'], ['lint', 'a', 'b'], ['lint', '--format', 'xml', 'ok.json'], ['lint', 'ok.json', '--format'], ['lint', '--verbose', 'ok.json']]
  for (const argv of malformed) {
    t.equal(await lintCommand(argv, io), 2, argv.join(' '))
    t.equal(io.stderr.pop(), 'usage: svc-conventions lint [--format text|json] <openapi.json>')
  }
  t.equal(await lintCommand(['lint', '--format=json', 'ok.json'], io), 0)
  t.same(JSON.parse(io.stdout.pop() as string), { violations: [], total: 0, rules: {} })
})

t.test('a report groups violations by operation, with rule ids and a summary', async t => {
  const io = capture()
  io.readFile = async (path) => await (await import('node:fs/promises')).readFile(path, 'utf8')
  t.equal(await lintCommand(['lint', fixture('bad-openapi.json')], io), 1)
  const report = io.stdout.join('\n')
  t.match(report, /^GET \/v1\/authors\n {2}header-name {2}\/parameters\/2 {2}X-Tenant: a custom header starts with Svc-/)
  t.match(report, /\nPOST \/_webhooks\/scanner\/document-scanned\n {2}webhook-internal {2}\(root\) {2}/)
  t.match(report, /\nRules broken:\n {2}[a-z-]+ \(1\): [^\n]+\n/)
  t.match(report, /\n {2}header-name \(1\): Headers, Custom headers: Svc- names\n/, 'each rule with the convention section it enforces')
  t.match(report, /\nsvc-lint: 5 violations of 5 rules in 2 places$/)
  t.equal(await lintCommand(['lint', fixture('clean-openapi.json')], io), 0)
  t.equal(await lintCommand(['lint', fixture('bad-openapi.json'), '--format', 'json'], io), 1)
  const json = JSON.parse(io.stdout.pop() as string)
  t.equal(json.total, 5)
  t.equal(json.violations.length, 5)
  t.match(json.violations[0], { rule: String, path: /^#\/paths\//, message: String })
  t.equal(Object.values(json.rules as Record<string, number>).reduce((a, b) => a + b, 0), 5, 'the counts by rule add up')
})

t.test('the summary counts in the singular; components keep their pointer', async t => {
  const report = formatReport([
    { rule: 'media-type', path: '#/components/schemas/A', message: 'm' },
    { rule: 'array-plural', path: '#/components/schemas/A/properties/b', message: 'n' }
  ])
  t.equal(report, [
    '#/components/schemas/A',
    '  media-type  (root)  m',
    '  array-plural  /properties/b  n',
    '',
    'Rules broken:',
    '  array-plural (1): Naming rules for properties, 5: arrays use plural names',
    '  media-type (1): Media types: application/vnd.svc-<name>[.v<n>]+json or +xml',
    '',
    'svc-lint: 2 violations of 2 rules in 1 place'
  ].join('\n'))
  t.equal(formatReport([{ rule: 'media-type', path: '#/paths/~1a~0b/x-other', message: 'm' }]).split('\n')[0], '#/paths/~1a~0b/x-other', 'not an operation: the pointer')
  t.equal(formatReport([{ rule: 'media-type', path: '#/paths/~1a~0b/put/requestBody', message: 'm' }]).split('\n').pop(), 'svc-lint: 1 violation of 1 rule in 1 place')
  t.equal(formatReport([{ rule: 'media-type', path: '#/paths/~1a~0b/put', message: 'm' }]).split('\n')[0], 'PUT /a~b')
})

t.test('the module runs as a command', async t => {
  const run = promisify(execFile)
  const script = fileURLToPath(new URL('../../bin/lint.ts', import.meta.url))
  const args = ['--import', '@tapjs/typescript/import', script, 'lint']
  const clean = await run(process.execPath, [...args, fixture('clean-openapi.json')])
  t.equal(clean.stdout, 'svc-lint: no violations\n')
  await t.rejects(run(process.execPath, [...args, fixture('bad-openapi.json')]), { code: 1, stdout: /svc-lint: 5 violations/ })
  await t.rejects(run(process.execPath, args), { code: 2, stderr: /usage: svc-conventions lint/ })
})
