import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

// docs/install.md names every import the package offers (package.json "exports"), and no other.
const root = join(import.meta.dirname, '..', '..')

t.test('every subpath of package.json "exports" has its row in docs/install.md', async t => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> }
  const offered = Object.keys(pkg.exports).filter(k => k !== './package.json').map(k => k === '.' ? 'svc-conventions' : `svc-conventions/${k.slice(2)}`).sort()
  const page = readFileSync(join(root, 'docs', 'install.md'), 'utf8')
  const listed = [...page.matchAll(/^\| `(svc-conventions(?:\/[a-z-]+)?)` \|/gm)].map(m => m[1] as string).sort()
  t.strictSame(listed, offered)
  for (const name of ['svc-conventions/csv', 'svc-conventions/downstream', 'svc-conventions/events']) t.ok(listed.includes(name), name)
})
