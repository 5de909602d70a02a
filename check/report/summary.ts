import type { CheckResult, VerdictKind } from '../types.js'

/** `48 rules: 40 pass, 2 fail, 3 not applicable, 3 not checked; 212 requests in 3.1 s`. */
export function summaryLine (result: CheckResult): string {
  const count = (kind: VerdictKind): number => result.verdicts.filter(v => v.verdict === kind).length
  return `${result.verdicts.length} rules: ${count('pass')} pass, ${count('fail')} fail, ${count('not applicable')} not applicable, ${count('not checked')} not checked; ` +
    `${result.requests} requests in ${(result.durationMillis / 1000).toFixed(1)} s`
}
