import { Type, type TSchema } from '@sinclair/typebox'
import { BulkOperation, BulkRequestOf, type BulkActionValue } from '../../schemas/bulk.js'
import type { ResourceDefinition } from '../resource/index.js'
import { actionEntities } from './prepare.js'

/** What an action does (conventions: Bulk request body; Method rules 8, 10, 13), for the document. */
function help (action: BulkActionValue, requireIfMatch: boolean): string {
  switch (action) {
    case 'CREATE': return 'CREATE: creates an entity, as POST does; the server assigns its id, so entity has none.'
    // Not a merge patch: the convention's bulk entity "matches the collection's entity schema".
    case 'UPDATE': return `UPDATE: a full replacement of the existing entity named by entity.id, as PUT does (not a merge patch: a field left out takes its default, or null); fails when there is none.${requireIfMatch ? ' ifMatch is required.' : ''}`
    case 'CREATE_UPDATE': return `CREATE_UPDATE: replaces the entity named by entity.id, or creates it with that id, as PUT does.${requireIfMatch ? ' ifMatch is required when it exists, and must be left out when it does not.' : ''}`
    case 'DELETE': return `DELETE: deletes the entity named by entity.id (and succeeds when there is none); nothing else of entity is read.${requireIfMatch ? ' ifMatch is required.' : ''}`
  }
}

interface Shape { entity: TSchema, ifMatchRequired: boolean, actions: BulkActionValue[] }

/**
 * The request body of a bulk endpoint as the document shows it: an operation is one of
 * several shapes told apart by `action`, each with the entity that action reads. The entity
 * schemas are those the operations are checked with (`actionEntities`), so the document
 * accepts the operations that pass their checks and no other. Actions that read the same
 * entity under the same rule share one shape.
 */
export function documentedBody (def: ResourceDefinition, actions: readonly BulkActionValue[], maxOperations: number): TSchema {
  const entities = actionEntities(def)
  const shapes: Shape[] = []
  for (const action of actions) {
    // Method rules 13, per operation: as the item routes, UPDATE and DELETE need the ETag.
    const ifMatchRequired = def.api.requireIfMatch && (action === 'UPDATE' || action === 'DELETE')
    const same = shapes.find(s => s.entity === entities[action] && s.ifMatchRequired === ifMatchRequired)
    if (same !== undefined) same.actions.push(action)
    else shapes.push({ entity: entities[action], ifMatchRequired, actions: [action] })
  }
  const operations = shapes.map(s => BulkOperation(s.entity, {
    actions: s.actions,
    ifMatchRequired: s.ifMatchRequired,
    description: s.actions.map(a => help(a, def.api.requireIfMatch)).join(' ')
  }))
  // Titled, the OpenAPI plugin shows it as a component of that name.
  const title = `${def.name.charAt(0).toUpperCase()}${def.name.slice(1)}BulkRequest`
  return BulkRequestOf(operations.length === 1 ? operations[0] as TSchema : Type.Union(operations), { maxOperations, title })
}
