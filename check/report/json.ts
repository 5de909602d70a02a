import type { CheckResult } from '../types.js'

/** The whole result, for tools. */
export function formatJson (result: CheckResult): string {
  return JSON.stringify(result, null, 2)
}
