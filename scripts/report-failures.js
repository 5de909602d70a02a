// After a failed `tap` run: prints each failing assertion, with its diagnostics, from the
// per-file results tap keeps under .tap/test-results, so that the end of a long CI log
// names what failed. Always exits 1: it runs only when the tests failed.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = '.tap/test-results'
const DIAGNOSTIC_LINES = 40

function * files (dir) {
  let entries
  try { entries = readdirSync(dir, { withFileTypes: true }) } catch { return }
  for (const entry of entries) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield * files(path)
    else if (entry.name.endsWith('.tap')) yield path
  }
}

let failures = 0
for (const file of files(ROOT)) {
  // Results of a test file that is gone (renamed, removed) are left over from an older run.
  if (!existsSync(file.slice(ROOT.length + 1).replace(/\.tap$/, ''))) continue
  const lines = readFileSync(file, 'utf8').split('\n')
  const report = []
  lines.forEach((line, i) => {
    if (!/^\s*not ok\b/.test(line) || /#\s*(TODO|SKIP)\b/i.test(line)) return
    report.push(line.trimEnd())
    const indent = line.length - line.trimStart().length
    for (const next of lines.slice(i + 1, i + 1 + DIAGNOSTIC_LINES)) {
      const nextIndent = next.length - next.trimStart().length
      if (next.trim() !== '' && nextIndent <= indent) break
      report.push(next.trimEnd())
    }
  })
  if (report.length === 0) continue
  failures += 1
  console.error(`\n=== failed: ${file.slice(ROOT.length + 1).replace(/\.tap$/, '')}\n${report.join('\n')}`)
}
console.error(failures === 0
  ? '\nthe tests failed, but no result file holds a failing assertion: see the log above (a crash or a timeout)'
  : `\n${failures} test file(s) failed`)
process.exit(1)
