// The coverage gate, decided on purpose: the Fastify plugins and the schema builders are
// the suite's product and keep 100 % of lines, branches and functions; the reference service,
// the store and the command-line tools are reported by tap but not gated here.
//
// It reads tap's lcov report. The tests run the TypeScript sources with their types erased; the
// children that run the built dist/ collect no coverage (test/support/child-env.ts): dist's
// records reach the sources through source maps at other columns, and merged with the sources'
// own they showed branches taken that no test took. Should such records come back, a function
// still counts as covered when one at its line ran (its copy at other columns may not have).
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'

const GATED = [/^model\//, /^plugins\//, /^schemas\//]

/** Per source file: lines, branches and function lines, each with whether it ran. */
function parseLcov (text) {
  const files = new Map()
  let cur = null
  const fnLine = new Map()
  for (const line of text.split('\n')) {
    if (line.startsWith('SF:')) {
      cur = { lines: new Map(), branches: new Map(), functions: new Map() }
      files.set(line.slice(3), cur)
      fnLine.clear()
    } else if (cur === null) {
      continue
    } else if (line.startsWith('DA:')) {
      const [n, hits] = line.slice(3).split(',')
      cur.lines.set(n, (cur.lines.get(n) ?? false) || Number(hits) > 0)
    } else if (line.startsWith('BRDA:')) {
      const [n, block, branch, hits] = line.slice(5).split(',')
      const key = `${n}:${block}:${branch}`
      cur.branches.set(key, (cur.branches.get(key) ?? false) || (hits !== '-' && Number(hits) > 0))
    } else if (line.startsWith('FN:')) {
      const [n, ...name] = line.slice(3).split(',')
      fnLine.set(name.join(','), [...(fnLine.get(name.join(',')) ?? []), n])
      if (!cur.functions.has(n)) cur.functions.set(n, false)
    } else if (line.startsWith('FNDA:')) {
      const [hits, ...name] = line.slice(5).split(',')
      const lines = fnLine.get(name.join(',')) ?? []
      // FN and FNDA records come in the same order: the first line not yet seen ran (or not).
      const n = lines.shift()
      if (n !== undefined && Number(hits) > 0) cur.functions.set(n, true)
    }
  }
  return files
}

const files = parseLcov(readFileSync('.tap/report/lcov.info', 'utf8'))
const failures = []
for (const [file, data] of files) {
  const rel = relative(process.cwd(), file)
  if (!GATED.some(re => re.test(rel))) continue
  for (const [metric, entries] of Object.entries(data)) {
    const missed = [...entries].filter(([, ran]) => !ran).map(([key]) => key.split(':')[0])
    if (missed.length > 0) failures.push(`${rel}: ${metric} not covered at line ${[...new Set(missed)].join(', ')}`)
  }
}
if (files.size === 0) failures.push('no coverage was recorded (.tap/report/lcov.info is empty)')
if (failures.length > 0) {
  console.error(`coverage gate: plugins/, model/ and schemas/ must be fully covered:\n  ${failures.join('\n  ')}`)
  process.exit(1)
}
console.log('coverage gate: plugins/, model/ and schemas/ fully covered')
