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
  for (const argv of [[], ['check', 'ok.json'], ['lint'], ['lint', 'a', 'b']]) {
    t.equal(await lintCommand(argv, io), 2, argv.join(' '))
    t.equal(io.stderr.pop(), 'usage: svc-conventions lint <openapi.json>')
  }
})

t.test('a report groups violations by operation, with rule ids and a summary', async t => {
  const io = capture()
  io.readFile = async (path) => await (await import('node:fs/promises')).readFile(path, 'utf8')
  t.equal(await lintCommand(['lint', fixture('bad-openapi.json')], io), 1)
  const report = io.stdout.join('\n')
  t.match(report, /^#\/paths\/~1v1~1authors\/get\n {2}header-name {2}\/parameters\/2 {2}X-Tenant: a custom header starts with Svc-/)
  t.match(report, /\n#\/paths\/~1_webhooks~1scanner~1document-scanned\/post\n {2}webhook-internal {2}\(root\) {2}/)
  t.match(report, /\nsvc-lint: 5 violations of 5 rules in 2 places$/)
  t.equal(await lintCommand(['lint', fixture('clean-openapi.json')], io), 0)
})

t.test('the summary counts in the singular', async t => {
  t.equal(formatReport([{ rule: 'media-type', path: '#/components/schemas/A', message: 'm' }]).split('\n').pop(), 'svc-lint: 1 violation of 1 rule in 1 place')
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
