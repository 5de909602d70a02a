import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { RULES } from '../../check/rules/index.js'

// docs/convention.md stays true: every rule the suite enforces names the test that proves it,
// and that test exists; every probe it names is a rule of `svc-conventions check`; the rules
// not implemented yet stand apart, without a test.
const root = join(import.meta.dirname, '..', '..')

interface Row { line: number, cells: string[] }

/** The rows of the Markdown table under `heading` (its header and separator left out). */
export function tableUnder (markdown: string, heading: string): Row[] {
  const lines = markdown.split('\n')
  const start = lines.indexOf(heading)
  if (start === -1) throw new Error(`no heading ${heading}`)
  const rows: Row[] = []
  let seen = 0
  for (let i = start + 1; i < lines.length && !(lines[i] as string).startsWith('#'); i++) {
    const line = lines[i] as string
    if (!line.startsWith('|')) {
      if (seen > 0) break
      continue
    }
    seen++
    if (seen <= 2) continue // header and separator
    rows.push({ line: i + 1, cells: line.slice(1, -1).split(/(?<!\\)\|/).map(c => c.trim()) })
  }
  return rows
}

/** `` `test/x.test.ts`: "name" `` → the file and the test's name, Markdown escapes undone. */
export function proofOf (cell: string): { file: string, name: string } | null {
  const m = /^`([^`]+\.test\.ts)`: "(.*)"$/.exec(cell)
  return m === null ? null : { file: m[1] as string, name: (m[2] as string).replace(/\\(.)/g, '$1') }
}

t.test('tables and proofs are read as written', async t => {
  const md = '# A\n\n## Enforced\n\ntext\n\n| rule | proof |\n| --- | --- |\n| a \\| b | `test/a.test.ts`: "x \\"y\\"" |\n| c | |\n\n## Next\n| z |\n'
  t.strictSame(tableUnder(md, '## Enforced').map(r => r.cells), [['a \\| b', '`test/a.test.ts`: "x \\"y\\""'], ['c', '']])
  t.strictSame(proofOf('`test/a.test.ts`: "x \\"y\\""'), { file: 'test/a.test.ts', name: 'x "y"' })
  t.equal(proofOf('test/a.test.ts: x'), null)
  t.throws(() => tableUnder(md, '## None'), /no heading/)
})

t.test('every rule the suite enforces names a test that exists', async t => {
  const page = readFileSync(join(root, 'docs', 'convention.md'), 'utf8')
  const enforced = tableUnder(page, '## Rules the suite enforces')
  t.ok(enforced.length >= 50, 'the convention is there, rule by rule')
  for (const { line, cells } of enforced) {
    const [rule = '', section = '', by = '', proof = ''] = cells
    const at = `docs/convention.md line ${line}: ${rule}`
    t.ok(section !== '' && by !== '', `${at}: a section and what enforces it`)
    const found = proofOf(proof)
    if (found === null) {
      t.fail(`${at}: no test named`, { fix: 'name the test as `test/<file>.test.ts`: "<test name>", or move the rule to the table of rules not implemented yet' })
      continue
    }
    const file = join(root, found.file)
    if (!existsSync(file)) {
      t.fail(`${at}: ${found.file} does not exist`)
      continue
    }
    t.ok(readFileSync(file, 'utf8').includes(found.name), `${at}: ${found.file} has the test "${found.name}"`)
  }
})

/** `` `a.b`, `c.d` `` → the probe ids named in a cell. */
export function probesOf (cell: string): string[] {
  return cell === '' ? [] : cell.split(',').map(p => /^`([a-z0-9.-]+)`$/.exec(p.trim())?.[1] ?? `malformed: ${p.trim()}`)
}

t.test('every probe the page names is a rule of the check', async t => {
  t.strictSame(probesOf('`a.b`, `c-d.e`'), ['a.b', 'c-d.e'])
  t.strictSame(probesOf(''), [])
  t.strictSame(probesOf('a.b'), ['malformed: a.b'])
  const page = readFileSync(join(root, 'docs', 'convention.md'), 'utf8')
  t.ok(page.includes('| rule | section | enforced by | proven by | probe |'), 'the table has its probe column')
  const ids = new Set(RULES.map(r => r.id))
  const named = new Set<string>()
  for (const { line, cells } of tableUnder(page, '## Rules the suite enforces')) {
    t.equal(cells.length, 5, `docs/convention.md line ${line}: five cells`)
    for (const id of probesOf(cells[4] ?? '')) {
      t.ok(ids.has(id), `docs/convention.md line ${line}: the probe ${id} is a rule of check/rules/index.ts`)
      named.add(id)
    }
  }
  t.ok(named.size >= 40, `${named.size} probes named`)
})

t.test('the rules not implemented yet, when there are any, are apart and name no test', async t => {
  const page = readFileSync(join(root, 'docs', 'convention.md'), 'utf8')
  // When every rule is enforced the section goes; while it stands it lists at least one.
  const pending = page.split('\n').includes('## Rules not implemented yet') ? tableUnder(page, '## Rules not implemented yet') : null
  if (pending === null) return
  t.ok(pending.length > 0)
  const enforced = new Set(tableUnder(page, '## Rules the suite enforces').map(r => r.cells[0]))
  for (const { line, cells } of pending) {
    t.notOk(cells.some(c => proofOf(c) !== null || c.includes('.test.ts')), `docs/convention.md line ${line}: no test for a rule not implemented`)
    t.notOk(enforced.has(cells[0]), `docs/convention.md line ${line}: not in both tables`)
  }
})
