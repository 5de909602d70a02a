import t from 'tap'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { CHECK_HELP } from '../../check/cli.js'
import { HELP as CREATE_HELP } from '../../create-svc-conventions/lib/options.js'
import { BIN_HELP, COMMANDS, HELP, USAGE, VERSION, binCommand, lintCommand, type LintIo } from '../../bin/lint.js'
import { USAGE as MIGRATE_USAGE } from '../../bin/migrate.js'
import { formatReport } from '../../plugins/lint/report.js'

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))

function capture (files: Record<string, string> = {}): LintIo & { stdout: string[], stderr: string[] } {
  const stdout: string[] = []
  const stderr: string[] = []
  return {
    stdout,
    stderr,
    stdinIsTty: true,
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
  t.strictSame(io.stdout, ['svc-lint: no violations'])
  t.equal(await lintCommand(['lint', 'missing.json'], io), 2)
  t.match(io.stderr.pop(), /^svc-lint: cannot read missing\.json: ENOENT/)
  t.equal(await lintCommand(['lint', 'bad.json'], io), 2)
  t.match(io.stderr.pop(), /^svc-lint: cannot parse bad\.json as JSON: /)
  t.equal(await lintCommand(['lint', 'v2.json'], io), 2)
  t.match(io.stderr.pop(), /is not an OpenAPI 3\.x document/)
  t.equal(await lintCommand(['lint', 'null.json'], io), 2)
  const malformed: Array<[string[], RegExp]> = [
    [[], new RegExp(`^svc-lint: no command: use ${Object.keys(COMMANDS).join(' or ')} \\(svc-conventions --help\\)$`)],
    [['lnt', 'ok.json'], new RegExp(`^svc-lint: unknown command "lnt": use ${Object.keys(COMMANDS).join(' or ')} \\(svc-conventions --help\\)$`)],
    [['lint'], /^svc-lint: no document: name a file or a URL, or pipe one in$/],
    [['lint', 'a', 'b'], /^svc-lint: one document at a time$/],
    [['lint', '--format', 'xml', 'ok.json'], /^svc-lint: --format must be text or json, got "xml"$/],
    [['lint', 'ok.json', '--format'], /^svc-lint: Option '--format <value>' argument missing$/],
    [['lint', '--verbose', 'ok.json'], /^svc-lint: Unknown option '--verbose'/]
  ]
  for (const [argv, message] of malformed) {
    t.equal(await lintCommand(argv, io), 2, argv.join(' '))
    t.equal(io.stderr.pop(), USAGE, argv.join(' '))
    t.match(io.stderr.pop(), message, argv.join(' '))
  }
  t.equal(await lintCommand(['lint', '--format=json', 'ok.json'], io), 0)
  t.strictSame(JSON.parse(io.stdout.pop() as string), { violations: [], total: 0, rules: {} })
})

t.test('--help and --version, with or without the command', async t => {
  for (const argv of [['--help'], ['-h']]) {
    const io = capture()
    t.equal(await lintCommand(argv, io), 0, argv.join(' '))
    t.strictSame(io.stdout, [BIN_HELP], `${argv.join(' ')}: the commands of the bin`)
  }
  for (const argv of [['lint', '--help'], ['lint', '-h']]) {
    const io = capture()
    t.equal(await lintCommand(argv, io), 0, argv.join(' '))
    t.strictSame(io.stdout, [HELP], `${argv.join(' ')}: the command's own help`)
    t.match(HELP, /^usage: svc-conventions lint \[--format text\|json\] \[<file> \| <url> \| -\]\n/)
  }
  for (const argv of [['--version'], ['-v']]) {
    const io = capture()
    t.equal(await lintCommand(argv, io), 0)
    t.strictSame(io.stdout, [VERSION])
  }
  t.match(VERSION, /^\d+\.\d+\.\d+/, 'the package\'s version')
})

t.test('svc-conventions --help lists every command the bin runs, one line each, and each answers its own --help', async t => {
  t.strictSame(Object.keys(COMMANDS), ['lint', 'migrate', 'check', 'new'])
  t.match(BIN_HELP, /^usage: svc-conventions <command> \[<options>\]\n/)
  for (const [name, line] of Object.entries(COMMANDS)) {
    t.match(BIN_HELP, `\n  ${name.padEnd(9)}${line}\n`, `${name}: one line`)
  }
  t.equal(BIN_HELP.split('\n').filter(l => /^ {2}[a-z]+ {2,}/.test(l)).length, Object.keys(COMMANDS).length, 'no other command line')
  const helps: Record<string, string> = { lint: HELP, migrate: MIGRATE_USAGE, check: CHECK_HELP, new: CREATE_HELP }
  for (const name of Object.keys(COMMANDS)) {
    const io = capture()
    t.equal(await binCommand([name, '--help'], io), 0, `${name} --help`)
    t.strictSame(io.stdout, [helps[name]], `${name} --help: its usage`)
  }
  const io = capture()
  t.equal(await binCommand(['--help'], io), 0)
  t.strictSame(io.stdout, [BIN_HELP])
})

t.test('YAML or JSON, from a file, a URL or standard input', async t => {
  const yaml = 'openapi: 3.1.0\ninfo: { title: t, version: "1" }\npaths: {}\n'
  const json = '{"openapi":"3.1.0","paths":{}}'
  const sources: Array<[string, string[], Partial<LintIo>]> = [
    ['a YAML file', ['lint', 'openapi.yaml'], {}],
    ['YAML on standard input, by -', ['lint', '-'], { readStdin: async () => yaml }],
    ['YAML piped in, no argument', ['lint'], { stdinIsTty: false, readStdin: async () => yaml }],
    ['JSON piped in', ['lint', '--format', 'json'], { stdinIsTty: false, readStdin: async () => json }],
    ['a URL answering YAML', ['lint', 'https://api.example.com/openapi.yaml'], { fetchText: async () => ({ text: yaml, contentType: 'application/yaml' }) }],
    ['a URL answering JSON', ['lint', 'http://127.0.0.1:3000/openapi.json'], { fetchText: async () => ({ text: json, contentType: 'application/json; charset=utf-8' }) }]
  ]
  for (const [name, argv, overrides] of sources) {
    const io = { ...capture({ 'openapi.yaml': yaml }), ...overrides }
    t.equal(await lintCommand(argv, io), 0, name)
    t.strictSame(io.stderr, [], name)
  }
  const bad: Array<[string, string[], Partial<LintIo>, RegExp]> = [
    ['YAML that does not parse', ['lint', 'broken.yaml'], {}, /^svc-lint: cannot parse broken\.yaml as YAML: /],
    ['a URL that fails', ['lint', 'https://api.example.com/openapi.json'], { fetchText: async () => { throw new Error('https://api.example.com/openapi.json answered 404 Not Found') } }, /^svc-lint: cannot read https:\/\/api\.example\.com\/openapi\.json: https:\/\/api\.example\.com\/openapi\.json answered 404 Not Found$/],
    ['standard input that is not OpenAPI', ['lint', '-'], { readStdin: async () => 'swagger: "2.0"\n' }, /^svc-lint: standard input is not an OpenAPI 3\.x document/]
  ]
  for (const [name, argv, overrides, message] of bad) {
    const io = { ...capture({ 'broken.yaml': 'openapi: [3.1\n  bad: {' }), ...overrides }
    t.equal(await lintCommand(argv, io), 2, name)
    t.match(io.stderr.pop(), message, name)
  }
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
  const args = ['--import', new URL('../../scripts/strip-types.js', import.meta.url).href, script, 'lint']
  const clean = await run(process.execPath, [...args, fixture('clean-openapi.json')])
  t.equal(clean.stdout, 'svc-lint: no violations\n')
  await t.rejects(run(process.execPath, [...args, fixture('bad-openapi.json')]), { code: 1, stdout: /svc-lint: 5 violations/ })
  await t.rejects(run(process.execPath, [...args, '--format']), { code: 2, stderr: /usage: svc-conventions lint/ })
  const yaml = (await import('yaml')).stringify(JSON.parse(await (await import('node:fs/promises')).readFile(fixture('bad-openapi.json'), 'utf8')))
  const piped = await new Promise<{ code: number | null, stdout: string }>((resolve) => {
    const child = execFile(process.execPath, [...args, '-'], (err, stdout) => { resolve({ code: err === null ? 0 : (err as { code: number }).code, stdout }) })
    child.stdin?.end(yaml)
  })
  t.equal(piped.code, 1, 'YAML read from standard input')
  t.match(piped.stdout, /svc-lint: 5 violations/)
})

t.test('a URL is fetched with a User-Agent of the conventions\' form', async t => {
  const { createServer } = await import('node:http')
  let seen: string | undefined
  const server = createServer((req, res) => {
    seen = req.headers['user-agent']
    if (req.url === '/openapi.json') res.writeHead(200, { 'content-type': 'application/json' }).end('{"openapi":"3.1.0","paths":{}}')
    else res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  const io = capture()
  t.equal(await lintCommand(['lint', `${base}/openapi.json`], { out: io.out, err: io.err, readFile: io.readFile }), 0)
  t.equal(seen, `svc-conventions-lint/${VERSION}`)
  t.equal(await lintCommand(['lint', `${base}/nothing.json`], io), 2)
  t.equal(io.stderr.pop(), `svc-lint: cannot read ${base}/nothing.json: ${base}/nothing.json answered 404 Not Found`)
})
