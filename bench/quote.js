// `node bench/quote.js`: copies bench/results/latest.md (written by `npm run bench`) and
// bench/results/soak.md (written by `npm run soak`) between their markers in README.md and
// bench/README.md, so the READMEs quote the latest run. Run it after a run on a quiet machine.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'

const results = new URL('./results/', import.meta.url)
const blocks = [['bench:table', 'latest.md'], ['bench:soak', 'soak.md']]

for (const file of [new URL('../README.md', import.meta.url), new URL('./README.md', import.meta.url)]) {
  let text = readFileSync(file, 'utf8')
  for (const [marker, name] of blocks) {
    const source = new URL(name, results)
    const start = `<!-- ${marker}:start -->`
    const end = `<!-- ${marker}:end -->`
    const from = text.indexOf(start)
    const to = text.indexOf(end)
    if (!existsSync(source) || from === -1 || to < from) continue
    // The soak summary's own heading is dropped: the README has one.
    const quoted = readFileSync(source, 'utf8').replace(/^# .*\n\n/, '').trim()
    text = `${text.slice(0, from + start.length)}\n${quoted}\n${text.slice(to)}`
  }
  writeFileSync(file, text)
  process.stderr.write(`quoted the latest results in ${file.pathname}\n`)
}
