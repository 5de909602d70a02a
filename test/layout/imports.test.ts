import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import t from 'tap'

// The layout's promises (design.md, "Layout"), checked on every import and re-export:
// - each plugin folder is used by the others through its index.ts, or through its internal.ts
//   for what only the suite's own plugins use (no package entry), and plugins/shared/ holds
//   helpers that depend on no plugin, so a plugin can be read, changed and registered alone;
// - arrows point one way: store/ and model/ import nothing from plugins/, model/ nothing
//   from store/, and no folder imports one that imports it back;
// - the reference service (routes/, app.ts, server.ts, tracing.ts, bin/), the examples, the benchmark and
//   the service's own tests use the suite through its public entries only: the root, or a
//   subpath of package.json "exports" by the package's name (`svc-conventions/store`).

const root = join(import.meta.dirname, '..', '..')

function sources (dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'results' ? [] : sources(path)
    return /\.(ts|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

/** The relative module specifiers of a file's imports and re-exports (dynamic imports too), types included. */
function specifiers (file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const found = [
    ...text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+'(\.[^']+)'/gm),
    ...text.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g)
  ]
  return found.map((m) => m[1] as string)
}

interface Edge { file: string, target: string }

/** Every relative import of the files under `dirs`, as paths from the repository root. */
function edges (...dirs: string[]): Edge[] {
  const out: Edge[] = []
  for (const file of dirs.flatMap(d => d.endsWith('.ts') ? [join(root, d)] : sources(join(root, d)))) {
    for (const spec of specifiers(file)) {
      out.push({ file: relative(root, file).split(sep).join('/'), target: relative(root, resolve(dirname(file), spec)).split(sep).join('/') })
    }
  }
  return out
}

const top = (path: string): string => path.includes('/') ? path.slice(0, path.indexOf('/')) : path
const pluginOf = (path: string): string | null => path.startsWith('plugins/') ? path.split('/')[1] as string : null

t.test('a sibling plugin folder is imported through its index.ts or internal.ts only', async t => {
  const bad = edges('plugins').filter((e) => {
    const from = pluginOf(e.file)
    const to = pluginOf(e.target)
    return to !== null && to !== from && to !== 'shared' && e.target !== `plugins/${to}/index.js` && e.target !== `plugins/${to}/internal.js`
  })
  t.strictSame(bad, [], 'imports of another plugin\'s internals')
  // The sibling entries are not the package's.
  const pkg = readFileSync(join(root, 'package.json'), 'utf8')
  t.notMatch(pkg, /internal\.(ts|js)/, 'no internal.ts in package.json "exports"')
})

t.test('plugins/shared/ imports nothing from a plugin folder', async t => {
  t.strictSame(edges('plugins/shared').filter((e) => pluginOf(e.target) !== null && pluginOf(e.target) !== 'shared'), [])
})

t.test('store/ and model/ import nothing from plugins/, model/ nothing from store/', async t => {
  t.strictSame(edges('store', 'model').filter((e) => top(e.target) === 'plugins'), [])
  t.strictSame(edges('model').filter((e) => top(e.target) === 'store'), [])
})

t.test('the reference service, examples, benchmark and service tests use the public entry', async t => {
  const internal = (e: Edge): boolean => ['plugins', 'store', 'model', 'schemas', 'dist'].includes(top(e.target)) && !['dist/index.js', 'dist/app.js', 'dist/config.js'].includes(e.target)
  t.strictSame(edges('routes', 'app.ts', 'server.ts', 'tracing.ts', 'bin', 'examples', 'bench', 'test/service').filter(internal), [])
  t.ok(edges('routes').length > 3, 'the files were read')
})

t.test('what they import by the package\'s name is an entry of its "exports"', async t => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> }
  const entries = new Set(Object.keys(pkg.exports).map(key => key === '.' ? 'svc-conventions' : `svc-conventions/${key.slice(2)}`))
  const files = ['routes', 'app.ts', 'server.ts', 'tracing.ts', 'bin', 'examples', 'bench', 'test/service'].flatMap(d => d.endsWith('.ts') ? [join(root, d)] : sources(join(root, d)))
  const named = files.flatMap(file => [...readFileSync(file, 'utf8').matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+'(svc-conventions[^']*)'/gm)].map(m => m[1] as string))
  t.ok(named.length > 5, 'the subpath imports were read')
  t.strictSame(named.filter(spec => !entries.has(spec)), [])
})

t.test('no folder imports one that imports it back, directly or through others', async t => {
  // Plugin folders are nodes of their own; the rest by top-level folder.
  const node = (path: string): string => pluginOf(path) !== null ? `plugins/${pluginOf(path) as string}` : top(path)
  const graph = new Map<string, Set<string>>()
  for (const e of edges('plugins', 'store', 'model', 'schemas')) {
    const from = node(e.file)
    const to = node(e.target)
    if (from === to) continue
    const targets = graph.get(from) ?? new Set<string>()
    targets.add(to)
    graph.set(from, targets)
  }
  const cycles: string[] = []
  const visit = (n: string, path: string[]): void => {
    if (path.includes(n)) {
      cycles.push([...path.slice(path.indexOf(n)), n].join(' → '))
      return
    }
    for (const next of graph.get(n) ?? []) visit(next, [...path, n])
  }
  for (const n of graph.keys()) visit(n, [])
  t.strictSame(cycles, [])
  t.ok(graph.size > 10, 'the folders were read')
})
