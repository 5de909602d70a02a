// JUnit XML, which any CI reads: one test case per rule; a failure carries the exchange, and
// rules not applicable or not checked are skipped with their reason.
import type { CheckResult } from '../types.js'
import { exchangeLines } from './exchange.js'

const escape = (text: string): string => text.replace(/[<>&"']/g, c => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] as string)
  // XML 1.0 admits only #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]:
  // every other character goes (control characters, U+FFFE, U+FFFF, a surrogate without its pair).
  .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')

export function formatJunit (result: CheckResult): string {
  const failures = result.verdicts.filter(v => v.verdict === 'fail').length
  const skipped = result.verdicts.filter(v => v.verdict === 'not applicable' || v.verdict === 'not checked').length
  const time = (result.durationMillis / 1000).toFixed(3)
  const cases = result.verdicts.map(v => {
    const open = `    <testcase classname="${escape(v.section)}" name="${escape(`${v.id}: ${v.title}`)}">`
    if (v.verdict === 'pass') return `${open}</testcase>`
    if (v.verdict === 'fail') {
      const detail = v.exchange === undefined ? '' : exchangeLines(v.exchange).join('\n')
      return `${open}\n      <failure message="${escape(v.reason ?? '')}">${escape(detail)}</failure>\n    </testcase>`
    }
    return `${open}\n      <skipped message="${escape(`${v.verdict}: ${v.reason ?? ''}`)}"/>\n    </testcase>`
  })
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="svc-conventions check" tests="${result.verdicts.length}" failures="${failures}" skipped="${skipped}" time="${time}">`,
    `  <testsuite name="${escape(result.baseUrl)}" tests="${result.verdicts.length}" failures="${failures}" skipped="${skipped}" time="${time}">`,
    `    <properties><property name="requests" value="${result.requests}"/><property name="writes" value="${String(result.writes)}"/></properties>`,
    ...cases,
    '  </testsuite>',
    '</testsuites>'
  ].join('\n')
}
