import { ForeignKeyViolation, SerializationFailure, UniqueViolation, Unavailable, isStoreError } from '../../store/errors.js'
import { ProblemError, problems } from '../problem/index.js'
import { unavailableProblem } from '../problem/index.js'
import { constraintNames } from '../../store/table/index.js'
import type { ResourceDefinition } from './define.js'
import { withArticle } from '../shared/article.js'

/**
 * What the failed statement was doing: to tell the two sides of a foreign key apart, and
 * whether the values came from the request body (`write`) or were the stored ones (`transition`,
 * such as a restore, which has no body).
 */
export type Operation = 'write' | 'delete' | 'transition'

/** Every definition known to the plugin, by table, to name the children that block a delete. */
export type Registry = ReadonlyMap<string, ResourceDefinition>

/** `authorId` → `AUTHOR_ID`, for context codes (conventions: CAPITAL_SNAKE_CASE). */
export function upperSnake (name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()
}

function printable (value: unknown): string | undefined {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined
}

/** The context item's `source`: the body, unless the values were the stored ones (a request without a body). */
type Source = { source: 'body' } | Record<string, never>

function uniqueProblem (def: ResourceDefinition, err: UniqueViolation, body: Record<string, unknown>, source: Source): ProblemError {
  const field = def.storage.spec.unique.find(f => constraintNames.unique(def.storage.table, f) === err.constraint)
  if (field === undefined) {
    return problems.conflict(`${withArticle(def.name, true)} with this id already exists; use another id.`)
  }
  const value = printable(body[field])
  const which = field === 'name' ? `named '${String(value)}'` : `with ${field} '${String(value)}'`
  // Without a body the client cannot choose another value here: the other entity must give it up.
  const detail = 'source' in source
    ? `${withArticle(def.name, true)} ${which} already exists; choose another ${field}.`
    : `Another ${def.name} ${which} exists; change or delete that one first, then retry.`
  const item: { code: string, message: string, field: string, source?: 'body', value?: string } = {
    code: `UNIQUE_${upperSnake(field)}_VIOLATION`, message: `must be unique among ${def.collection}`, field, ...source
  }
  if (value !== undefined) item.value = value
  return problems.conflict(detail, { context: [item], cause: err })
}

function referenceProblem (def: ResourceDefinition, err: ForeignKeyViolation, op: Operation, id: string, body: Record<string, unknown>, source: Source, registry: Registry, itemPath: (id: string) => string): ProblemError {
  if (op === 'delete') {
    // The violated key belongs to the referencing (child) table: name its collection.
    const child = registry.get(err.table ?? '')
    const what = child === undefined ? 'other resources' : child.collection
    // A deleted child keeps its reference (it can be restored): the client must learn where to look.
    const advice = child?.api.softDelete === true
      ? ', deleted ones included (they keep it, to be restored); change or delete those not deleted, and restore and change the deleted ones, first.'
      : '; delete or change them first.'
    return problems.conflict(`The ${def.name} ${id} cannot be deleted while ${what} refer to it${advice}`, { instance: itemPath(id), cause: err })
  }
  const ref = def.references.find(r => constraintNames.foreignKey(def.storage.table, r.field) === err.constraint)
  if (ref === undefined) {
    return problems.conflict(`The ${def.name} refers to something that does not exist; correct the references.`)
  }
  const value = printable(body[ref.field])
  return problems.conflict(`No ${ref.resource.name} has the id '${String(value)}' given in ${ref.field}; create it first or correct ${ref.field}.`, {
    context: [{ code: 'REFERENCE_NOT_FOUND', message: `must name an existing ${ref.resource.name}`, field: ref.field, ...source, ...(value === undefined ? {} : { value }) }],
    cause: err
  })
}

/**
 * Maps a store error to the convention's problem (Method rules 7: a change that violates a
 * constraint is 409), naming the conflict from the constraint's name, never from the
 * database's message, so no SQL or value of another row leaks. Anything else is rethrown.
 * `itemPath` names the item as clients reach it (under the routes' prefix).
 */
export function storeProblem (err: unknown, def: ResourceDefinition, op: Operation, id: string, body: Record<string, unknown>, registry: Registry, itemPath: (id: string) => string = def.itemPath): unknown {
  if (!isStoreError(err)) return err
  const source: Source = op === 'transition' ? {} : { source: 'body' }
  if (err instanceof UniqueViolation) return uniqueProblem(def, err, body, source)
  if (err instanceof ForeignKeyViolation) return referenceProblem(def, err, op, id, body, source, registry, itemPath)
  if (err instanceof SerializationFailure) {
    return problems.conflict(`The ${def.name} was changed by a concurrent request; retry.`, { cause: err })
  }
  if (err instanceof Unavailable) return unavailableProblem(err)
  // A check or not-null violation means input slipped past validation: a fault of ours.
  return problems.internal('The change could not be stored; retry later, and quote the requestId if it persists.', { cause: err })
}
