import { Type, type TObject, type TSchema } from '@sinclair/typebox'
import { standardProperties } from '../../../schemas/standard.js'
import { DateTime, Id, Nullable } from '../../../schemas/types.js'
import { createBody, isNullable, patchBody } from '../write-schemas.js'
import { fail, refPrefix, SERVER_MANAGED, type CheckedOptions, type DerivedField } from './options.js'
import type { ResourceApi } from './types.js'

function required (props: Record<string, unknown>): TObject {
  return Type.Unsafe({
    type: 'object',
    properties: props,
    required: Object.keys(props),
    additionalProperties: false
  }) as unknown as TObject
}

/** The `<entity>Ref` of each reference that asks for one: read-only, `svc:<entity>::<id>`. */
function referenceRefs (o: CheckedOptions): Record<string, DerivedField> {
  const out: Record<string, DerivedField> = {}
  for (const r of o.references) {
    if (r.ref === undefined) continue
    const entity = r.resource.name
    const prefix = refPrefix(entity)
    const field = r.field
    const refSchema = standardProperties.ref(entity, { description: `URN-like reference of the ${entity} named by ${field}.` })
    out[r.ref] = {
      schema: isNullable(o.fields[field] as TSchema) ? Nullable(refSchema) : refSchema,
      value: (e) => e[field] === null ? null : prefix + String(e[field])
    }
  }
  return out
}

/**
 * The API face of a resource: the entity as GET returns it, the summary a collection lists,
 * the bodies of writes, and what clients may and may not send. Responses list every property
 * (a null is written, never left out), in the order built here.
 */
export function apiOf (o: CheckedOptions): ResourceApi {
  const derived: Record<string, DerivedField> = { ...referenceRefs(o), ...o.derived }
  for (const d of Object.keys(derived)) {
    if (o.fieldNames.includes(d) || SERVER_MANAGED.includes(d)) fail(`derived.${d}`, d, 'a name that is not already a field')
  }
  const derivedSchemas: Record<string, TSchema> = {}
  for (const [k, d] of Object.entries(derived)) derivedSchemas[k] = { ...d.schema, readOnly: true }
  // A stored read-only field says so (OpenAPI's readOnly), as the server-managed and derived ones do.
  const fieldProps = Object.fromEntries(o.fieldNames.map(f => [f, o.readOnly.includes(f) ? { ...o.fields[f], readOnly: true } : o.fields[f]]))
  const entityProps = {
    id: standardProperties.id,
    ref: standardProperties.ref(o.name),
    ...fieldProps,
    ...derivedSchemas,
    createdDateTime: standardProperties.createdDateTime,
    createdBy: Nullable(standardProperties.createdBy),
    modifiedDateTime: standardProperties.modifiedDateTime,
    modifiedBy: Nullable(standardProperties.modifiedBy),
    ...(o.softDelete
      ? {
          deletedDateTime: Nullable(DateTime({ readOnly: true, description: 'When the entity was deleted; null when it is not.' })),
          deletedBy: Nullable(standardProperties.deletedBy)
        }
      : {}),
    etag: standardProperties.etag
  }
  const summaryProps = Object.fromEntries(Object.entries(entityProps).filter(([k]) => !o.summaryOmit.includes(k)))
  const writable = o.fieldNames.filter(f => !o.readOnly.includes(f))
  return {
    entity: required(entityProps),
    summary: required(summaryProps),
    writable,
    readOnly: new Set<string>([...SERVER_MANAGED, ...o.readOnly, ...Object.keys(derived)]),
    derived,
    requireIfMatch: o.requireIfMatch,
    scopes: o.scopes,
    // A soft-deleted entity is listed when a query asks for it by its deletion.
    filterable: o.softDelete && !o.filterable.includes('deletedDateTime') ? [...o.filterable, 'deletedDateTime'] : o.filterable,
    sortable: o.softDelete && !o.sortable.includes('deletedDateTime') ? [...o.sortable, 'deletedDateTime'] : o.sortable,
    softDelete: o.softDelete,
    actions: o.actions,
    subCollections: o.subCollections,
    bodies: {
      create: createBody(o.fields, writable),
      replace: createBody(o.fields, writable, [], { id: Id() }),
      patch: patchBody(o.fields, writable)
    }
  }
}
