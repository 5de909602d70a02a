import type { Comparison, Filter, Operand } from '../../model/query.js'
import { isWildcard } from '../../model/query.js'
import { FIQL_OPERATORS } from './fiql.js'

/*
 * Prints a filter back to FIQL that parseFilter reads as the same filter: used for
 * canonical forms (links, logs) and by the round-trip property test.
 */

const TOKENS = new Map<string, string>()
for (const [token, { op, ci }] of FIQL_OPERATORS) TOKENS.set(op + (ci ? 'ic' : ''), token)

/** Whether a literal needs quotes: empty, or holding whitespace, reserved characters, `\` or `*`. */
function needsQuotes (text: string): boolean {
  if (text === '') return true
  for (let i = 0; i < text.length; i++) {
    switch (text.charCodeAt(i)) {
      case 32: case 9: case 10: case 13: case 92: case 42:
      case 34: case 39: case 40: case 41: case 59: case 44: case 61: case 33: case 126: case 60: case 62:
        return true
    }
  }
  return false
}

function escape (text: string): string {
  return text.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('*', '\\*')
}

function printOperand (value: Operand): string {
  if (!isWildcard(value)) {
    const text = String(value)
    return needsQuotes(text) ? `"${escape(text)}"` : text
  }
  const body = value.wildcard.map(escape).join('*')
  const plain = body !== '' && value.wildcard.every((segment) => segment === '' || !needsQuotes(segment))
  return plain ? body : `"${body}"`
}

function printComparison (node: Comparison, prefix: string | undefined): string {
  const selector = prefix === undefined ? node.field : node.field.slice(prefix.length + 1)
  const token = TOKENS.get(node.op + (node.ci ? 'ic' : '')) as string
  const args = node.op === 'in' || node.op === 'out'
    ? `(${node.values.map(printOperand).join(',')})`
    : printOperand(node.values[0] as Operand)
  return selector + token + args
}

/**
 * FIQL of a filter. `prefix` prints selectors relative to an object attribute, as a
 * hybrid filter of that attribute writes them.
 */
export function printFiql (filter: Filter, prefix?: string): string {
  if (filter.kind === 'cmp') return printComparison(filter, prefix)
  const parts = filter.children.map((child) => {
    const text = printFiql(child, prefix)
    // `;` binds tighter than `,`, so only an OR inside an AND needs parentheses.
    return filter.kind === 'and' && child.kind === 'or' ? `(${text})` : text
  })
  return parts.join(filter.kind === 'and' ? ';' : ',')
}
