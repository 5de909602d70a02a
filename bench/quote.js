// `node bench/quote.js`: copies bench/results/latest.md (written by `npm run bench`) between the
// `bench:table` markers of docs/performance.md and bench/README.md, so both quote the latest run.
// Run it after a run at the default settings on a quiet machine.
import { readFileSync, writeFileSync } from 'node:fs'

const START = '<!-- bench:table:start -->'
const END = '<!-- bench:table:end -->'
const table = readFileSync(new URL('./results/latest.md', import.meta.url), 'utf8').trim()

for (const file of [new URL('../docs/performance.md', import.meta.url), new URL('./README.md', import.meta.url)]) {
  const text = readFileSync(file, 'utf8')
  const from = text.indexOf(START)
  const to = text.indexOf(END)
  if (from === -1 || to < from) continue
  writeFileSync(file, `${text.slice(0, from + START.length)}\n${table}\n${text.slice(to)}`)
  process.stderr.write(`quoted bench/results/latest.md in ${file.pathname}\n`)
}
