import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

// The loader every test process runs the TypeScript sources with. Its hooks serve both ways
// Node calls them: in the process's own thread (the next hook answers at once) and in a hooks
// thread (it answers with a promise).
interface Resolved { url: string }
interface Loaded { format?: string, source?: string | Uint8Array }
type Next<A, R> = (a: A, context: Record<string, unknown>) => R | Promise<R>
interface Hooks {
  resolve: (specifier: string, context: { parentURL?: string }, next: Next<string, Resolved>) => Resolved | Promise<Resolved>
  load: (url: string, context: Record<string, unknown>, next: Next<string, Loaded>) => Loaded | Promise<Loaded>
}
const hooks = await import(new URL('../../scripts/strip-types-hooks.js', import.meta.url).href) as Hooks

const dir = mkdtempSync(join(tmpdir(), 'svc-strip-types-'))
t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
for (const name of ['both.js', 'both.ts', 'only-ts.ts', 'only-js.js']) writeFileSync(join(dir, name), '')
const at = (name: string): string => pathToFileURL(join(dir, name)).href

t.test('resolve: the .ts twin of a .js specifier, where the sources have it', async (t) => {
  const fromTs = at('parent.ts')
  const fromJs = at('parent.js')
  const table: Array<[string, string | undefined, string]> = [
    ['./both.js', fromTs, './both.ts'],
    ['./both.js?tapmock=1', fromTs, './both.ts?tapmock=1'],
    ['./only-js.js', fromTs, './only-js.js'],
    ['./both.js', fromJs, './both.js'],
    ['./only-ts.js', fromJs, './only-ts.ts'],
    ['../x/only-ts.js', fromJs, '../x/only-ts.js'],
    [at('only-ts.js'), undefined, at('only-ts.ts')],
    [at('both.js'), undefined, at('both.js')],
    ['./only-ts.js', undefined, './only-ts.js'],
    ['fastify', fromTs, 'fastify'],
    ['./only-ts.ts', fromTs, './only-ts.ts'],
    ['./only-ts.json', fromTs, './only-ts.json']
  ]
  for (const [specifier, parentURL, expected] of table) {
    const context = { parentURL }
    const seen: unknown[] = []
    const answer = hooks.resolve(specifier, context, (s, c) => { seen.push(c); return { url: s } })
    t.strictSame(answer, { url: expected }, `${specifier} from ${parentURL ?? 'no parent'}`)
    t.equal(seen[0], context, 'the context goes on as it came')
  }
  const later = hooks.resolve('./only-ts.js', { parentURL: fromJs }, async (s) => ({ url: s }))
  t.ok(later instanceof Promise, 'a promise from the next hook is answered as one')
  t.strictSame(await later, { url: './only-ts.ts' })
})

t.test('load: TypeScript with its types erased, every line and column in place', async (t) => {
  const source = 'const a: number = 1\nexport function f (x: string): string { return x }\n'
  const erased = 'const a         = 1\nexport function f (x        )         { return x }\n'
  const url = 'file:///svc-strip-types-test/sample.ts'
  const contexts: Array<Record<string, unknown>> = []
  const next = (_url: string, c: Record<string, unknown>): Loaded => { contexts.push(c); return { format: c.format as string, source: Buffer.from(source) } }
  t.strictSame(hooks.load(url, { conditions: [] }, next), { format: 'module', source: erased })
  t.strictSame(contexts[0], { conditions: [], format: 'module' }, 'the file is still loaded by the rest of the chain, as a module')
  t.strictSame(await hooks.load(url.replace(/ts$/, 'cts'), {}, async (u, c) => next(u, c)), { format: 'commonjs', source: erased }, '.cts: CommonJS, from a promise')

  // A next hook that answers without the source (Node's own, for some formats): read from disk.
  writeFileSync(join(dir, 'on-disk.ts'), source)
  t.strictSame(hooks.load(at('on-disk.ts'), {}, () => ({ format: 'module' })), { format: 'module', source: erased })

  const plain = { format: 'module', source: 'export const b: number = 2' }
  t.equal(hooks.load('file:///x/plain.js', {}, () => plain), plain, 'a .js file is left as it is')
  t.equal(hooks.load('node:fs', {}, () => plain), plain, 'a builtin too')
})
