// The coverage gate, decided on purpose: the Fastify plugins and the schema builders are
// the suite's product and keep 100 % of lines and branches; the reference service, the
// store and the command-line tools are reported by tap but not gated here.
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'

const GATED = [/^model\//, /^plugins\//, /^schemas\//]
const summary = JSON.parse(readFileSync('.tap/report/coverage-summary.json', 'utf8'))
const failures = []
for (const [file, data] of Object.entries(summary)) {
  if (file === 'total') continue
  const rel = relative(process.cwd(), file)
  if (!GATED.some(re => re.test(rel))) continue
  for (const metric of ['lines', 'branches', 'functions', 'statements']) {
    if (data[metric].pct < 100) failures.push(`${rel}: ${metric} ${data[metric].pct} %`)
  }
}
if (failures.length > 0) {
  console.error(`coverage gate: plugins/ and schemas/ must be fully covered:\n  ${failures.join('\n  ')}`)
  process.exit(1)
}
console.log('coverage gate: plugins/ and schemas/ fully covered')
