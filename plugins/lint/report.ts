import { RULES, type RuleId, type Violation } from './rules.js'
import { plural } from '../shared/plural.js'

const METHODS: ReadonlySet<string> = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])

/** One JSON Pointer segment, unescaped (RFC 6901, section 4). */
function unescape (segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~')
}

/**
 * The operation or component a violation is in: `pointer` is the prefix of its path,
 * `title` how the report names it (`GET /v1/authors`, else the pointer).
 */
function groupOf (path: string): { pointer: string, title: string } {
  const parts = path.split('/')
  const pointer = parts.slice(0, 4).join('/')
  const method = parts[3]
  if (parts[1] === 'paths' && parts[2] !== undefined && method !== undefined && METHODS.has(method)) {
    return { pointer, title: `${method.toUpperCase()} ${unescape(parts[2])}` }
  }
  return { pointer, title: pointer }
}

/** Violations counted by rule, in the order of the rule list. */
export function countByRule (violations: readonly Violation[]): Partial<Record<RuleId, number>> {
  const counts: Partial<Record<RuleId, number>> = {}
  for (const id of Object.keys(RULES) as RuleId[]) {
    const n = violations.filter(v => v.rule === id).length
    if (n > 0) counts[id] = n
  }
  return counts
}

/**
 * A readable report: violations grouped by operation or component (each with its rule id,
 * the pointer below the group and the message, in document order), then the rules broken
 * with the convention section each enforces, then a summary line.
 */
export function formatReport (violations: readonly Violation[]): string {
  if (violations.length === 0) return 'svc-lint: no violations'
  const groups = new Map<string, { title: string, list: Violation[] }>()
  for (const v of violations) {
    const { pointer, title } = groupOf(v.path)
    const group = groups.get(pointer) ?? { title, list: [] }
    group.list.push(v)
    groups.set(pointer, group)
  }
  const lines: string[] = []
  for (const [pointer, { title, list }] of groups) {
    lines.push(title)
    for (const v of list) lines.push(`  ${v.rule}  ${v.path.slice(pointer.length) || '(root)'}  ${v.message}`)
  }
  const counts = countByRule(violations)
  lines.push('', 'Rules broken:')
  for (const [id, n] of Object.entries(counts) as Array<[RuleId, number]>) lines.push(`  ${id} (${n}): ${RULES[id]}`)
  const rules = Object.keys(counts).length
  lines.push('', `svc-lint: ${plural(violations.length, 'violation')} of ${plural(rules, 'rule')} in ${plural(groups.size, 'place')}`)
  return lines.join('\n')
}

/** The violations as JSON, for tools: each violation, and the counts by rule. */
export function formatJson (violations: readonly Violation[]): string {
  return JSON.stringify({ violations, total: violations.length, rules: countByRule(violations) }, null, 2)
}
