import type { Guard } from '../../../store/table/index.js'
import { writableTags } from '../../conditional/index.js'
import type { Rules } from './decide.js'
import type { WriteOp } from './operations.js'

/**
 * Whether a merge patch replaces each field it names whole (RFC 7396: a value that is not an
 * object replaces the target's), so that the entity it makes is the stored one with those
 * values: valid when they are, which the route's schema has checked. A null (a removal, which
 * a default may fill) or an object (merged member by member) needs the entity as stored.
 */
function replacesWhole (values: Readonly<Record<string, unknown>>): boolean {
  for (const key in values) {
    const v = values[key]
    if (v === null || (typeof v === 'object' && !Array.isArray(v))) return false
  }
  return true
}

/**
 * For a replacement, a change of named fields (`change`), a delete, the server's own change
 * (`set`) or a merge patch that replaces the fields it names (`replacesWhole`), the rows it
 * applies to when decided on its preconditions alone, without reading the entity first: exactly
 * those on which `decide` would write (an existing row whose ETag meets If-Match and
 * If-None-Match, and not deleted but for `set`). Null when no row would do (If-Match required and not sent, no
 * strong tag in it, `If-None-Match: *`), when If-Unmodified-Since asks for the row's
 * modification date, or for another action: those are decided on the row as read. test/resource/blind-guard.test.ts holds the two to the same answers.
 */
export function blindGuard (op: WriteOp, rules: Rules): Guard | null {
  if (op.action === 'patch' ? !replacesWhole(op.values) : op.action !== 'put' && op.action !== 'change' && op.action !== 'delete' && op.action !== 'set') return null
  if (op.ifMatch === null && rules.requireIfMatch && op.action !== 'set') return null
  const tags = writableTags(op)
  if (tags === null) return null
  // The server's own record (`set`) applies to a deleted entity too.
  return { by: 'preconditions', allowed: tags.allowed, refused: tags.refused, live: rules.softDelete && op.action !== 'set' }
}
