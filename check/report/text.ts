// The report a person reads: verdicts grouped by convention section, one line each; under a
// failure its reason and the short exchange; a summary line at the end.
import type { CheckResult, VerdictKind } from '../types.js'
import { exchangeLines, visible } from './exchange.js'
import { summaryLine } from './summary.js'

const MARK: Record<VerdictKind, string> = { pass: 'pass', fail: 'FAIL', 'not applicable': 'n/a ', 'not checked': 'skip' }

export function formatText (result: CheckResult): string {
  const lines = [`svc-conventions check ${result.baseUrl} (${result.writes ? 'with --writes' : 'read-only'})`]
  const sections = [...new Set(result.verdicts.map(v => v.section))]
  const width = Math.max(0, ...result.verdicts.map(v => v.id.length))
  for (const section of sections) {
    lines.push('', section)
    for (const v of result.verdicts.filter(x => x.section === section)) {
      const why = v.verdict === 'not applicable' || v.verdict === 'not checked' ? ` (${v.reason ?? ''})` : ''
      lines.push(`  ${MARK[v.verdict]}  ${v.id.padEnd(width)}  ${v.title}${why}`)
      if (v.verdict !== 'fail') continue
      lines.push(`        ${v.reason ?? ''}`)
      if (v.exchange !== undefined) for (const line of exchangeLines(v.exchange)) lines.push(`        ${line}`)
    }
  }
  lines.push('')
  for (const left of result.leftBehind) lines.push(`left behind: ${left}`)
  lines.push(summaryLine(result))
  // Reasons and what is left behind quote the service too.
  return visible(lines.join('\n'))
}
