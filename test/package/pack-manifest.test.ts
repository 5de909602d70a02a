import t from 'tap'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

// prepack / postpack: the tarball's package.json has no prepare script; the clone's comes back as it was.
const run = promisify(execFile)
const script = join(import.meta.dirname, '..', '..', 'scripts', 'pack-manifest.js')
const original = JSON.stringify({ name: 'p', version: '1.0.0', scripts: { prepare: 'node build.js', test: 'tap' } }, null, 2) + '\n'

function project (t: Tap.Test): { dir: string, read: () => string } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pack-manifest-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  writeFileSync(join(dir, 'package.json'), original)
  return { dir, read: () => readFileSync(join(dir, 'package.json'), 'utf8') }
}

t.test('strip removes prepare and nothing else; restore gives back the same bytes', async t => {
  const { dir, read } = project(t)
  await run(process.execPath, [script, 'strip', dir])
  t.strictSame(JSON.parse(read()), { name: 'p', version: '1.0.0', scripts: { test: 'tap' } })
  await run(process.execPath, [script, 'restore', dir])
  t.equal(read(), original)
  t.notOk(existsSync(join(dir, '.package.json.packing')), 'nothing left beside it')
})

t.test('a pack that failed before postpack: the next strip starts from the original', async t => {
  const { dir, read } = project(t)
  await run(process.execPath, [script, 'strip', dir])
  await run(process.execPath, [script, 'strip', dir])
  await run(process.execPath, [script, 'restore', dir])
  t.equal(read(), original)
})

t.test('an unknown command is refused with the usage', async t => {
  const err = await run(process.execPath, [script, 'bogus']).then(() => null, (e: { code: number, stderr: string }) => e)
  t.match(err, { code: 2, stderr: /usage: node scripts\/pack-manifest.js strip\|restore/ })
})
