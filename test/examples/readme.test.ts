import { readdir, readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import t from 'tap'
import { fencedBlocks, regions } from './samples.js'

// Every TypeScript sample of the README and of docs/ is an example file, or a marked region of
// one, byte for byte: the example tests compile and run them, so the docs cannot drift from working code.
const root = join(import.meta.dirname, '..', '..')

/** README.md and every Markdown file under docs/, by path. */
async function pages (): Promise<string[]> {
  const found = ['README.md']
  for (const entry of await readdir(join(root, 'docs'), { recursive: true })) {
    if (entry.endsWith('.md')) found.push(relative(root, join(root, 'docs', entry)))
  }
  return found.sort()
}

t.test('every ```ts block of the README and of docs/ is an example, or a region of one, byte for byte', async (t) => {
  // examples/client/ holds the typed client of docs/client.md, beside its generated types.
  const files = (await readdir(join(root, 'examples'), { recursive: true })).filter(f => f.endsWith('.ts') && !f.endsWith('.d.ts')).sort()
  const samples = new Map<string, string>()
  for (const file of files) {
    const source = await readFile(join(root, 'examples', file), 'utf8')
    samples.set(`examples/${file}`, source)
    for (const region of regions(source, `examples/${file}`)) samples.set(`examples/${file} #region ${region.name}`, region.code)
  }

  const used = new Set<string>()
  let count = 0
  for (const page of await pages()) {
    for (const block of fencedBlocks(await readFile(join(root, page), 'utf8'))) {
      count++
      const match = [...samples].find(([, code]) => code === block.code)
      if (match !== undefined) used.add(match[0])
      t.ok(match, `${page} line ${block.line} (${block.heading}) is an example file or a readme-* region of one`, {
        block: block.code.split('\n')[0],
        fix: 'copy the block from examples/, or mark the region it comes from with // #region readme-<name> … // #endregion'
      })
    }
  }
  t.ok(count >= 10, 'the README and the plugin pages show the examples')
  const unused = [...samples.keys()].filter(name => name.includes('#region') && !used.has(name))
  t.strictSame(unused, [], 'every readme-* region appears in the README or a page of docs/')
})

t.test('the examples import the suite by its package name, as users do', async (t) => {
  for (const file of (await readdir(join(root, 'examples'))).filter(f => f.endsWith('.ts'))) {
    const source = await readFile(join(root, 'examples', file), 'utf8')
    t.match(source, /from 'svc-conventions(\/[a-z-]+)?'/, file)
    t.notMatch(source, /from '\.\.\//, `${file} imports no source file by path`)
  }
})

t.test('the README opens with the two commands', async (t) => {
  const readme = await readFile(join(root, 'README.md'), 'utf8')
  t.ok(readme.startsWith('# svc-conventions\n\n    npm ci && npm start\n    npm test\n'))
})

t.test('fenced blocks and regions are read as written', async (t) => {
  const md = '# A\n```ts\nconst a = 1\n```\n## B\n```sh\nls\n```\n```ts\n\nb()\n```\n'
  t.strictSame(fencedBlocks(md), [
    { line: 2, heading: '# A', code: 'const a = 1\n' },
    { line: 9, heading: '## B', code: '\nb()\n' }
  ])
  t.throws(() => fencedBlocks('```ts\nx\n'), /line 1: the fenced block is never closed/)

  const source = [
    'import x',
    '// #region readme-outer',
    'function f () {',
    '  // #region readme-inner',
    '  const y = 1',
    '',
    '    return y',
    '  // #endregion',
    '}',
    '// #endregion',
    'main()'
  ].join('\n')
  t.strictSame(regions(source), [
    { name: 'readme-inner', code: 'const y = 1\n\n  return y\n' },
    { name: 'readme-outer', code: 'function f () {\n  const y = 1\n\n    return y\n}\n' }
  ])
  t.throws(() => regions('// #endregion', 'a.ts'), /a\.ts:1: #endregion without #region/)
  t.throws(() => regions('// #region readme-x\nx', 'a.ts'), /a\.ts: readme-x has no #endregion/)
  t.throws(() => regions('  // #region readme-x\nx\n  // #endregion', 'a.ts'), /a\.ts:2: a line of readme-x is indented less/)
})
