// TAP 14: one test point per rule; rules not applicable or not checked are SKIPs with their reason.
import type { CheckResult } from '../types.js'
import { exchangeLines } from './exchange.js'
import { summaryLine } from './summary.js'

const oneLine = (text: string): string => text.replace(/[\r\n#]+/g, ' ')

export function formatTap (result: CheckResult): string {
  const lines = ['TAP version 14', `1..${result.verdicts.length}`]
  for (const [i, v] of result.verdicts.entries()) {
    const name = `${i + 1} - ${v.id}: ${oneLine(v.title)}`
    if (v.verdict === 'pass') lines.push(`ok ${name}`)
    else if (v.verdict === 'fail') {
      lines.push(`not ok ${name}`, '  ---', `  reason: ${JSON.stringify(v.reason ?? '')}`)
      if (v.exchange !== undefined) lines.push('  exchange: |', ...exchangeLines(v.exchange).map(l => `    ${l}`))
      lines.push('  ...')
    } else lines.push(`ok ${name} # SKIP ${v.verdict}: ${oneLine(v.reason ?? '')}`)
  }
  lines.push(`# ${summaryLine(result)}`)
  return lines.join('\n')
}
