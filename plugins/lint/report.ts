import type { Violation } from './rules.js'

/** The operation or component a violation is in: the pointer up to its method or schema name. */
function groupOf (path: string): string {
  const parts = path.split('/')
  return parts.slice(0, 4).join('/')
}

/** A readable report: violations grouped by operation or component, then a summary line. */
export function formatReport (violations: readonly Violation[]): string {
  if (violations.length === 0) return 'svc-lint: no violations'
  const groups = new Map<string, Violation[]>()
  for (const v of violations) {
    const group = groupOf(v.path)
    groups.set(group, [...(groups.get(group) ?? []), v])
  }
  const lines: string[] = []
  for (const [group, list] of groups) {
    lines.push(group)
    for (const v of list) lines.push(`  ${v.rule}  ${v.path.slice(group.length) || '(root)'}  ${v.message}`)
  }
  const rules = new Set(violations.map(v => v.rule)).size
  lines.push('', `svc-lint: ${violations.length} violation${violations.length === 1 ? '' : 's'} of ${rules} rule${rules === 1 ? '' : 's'} in ${groups.size} place${groups.size === 1 ? '' : 's'}`)
  return lines.join('\n')
}
