import type { ResourceDefinition } from './define.js'

type Row = Record<string, unknown>

/**
 * Row → entity. A row of the resource's table (store/table) already holds the API values under
 * the API names; only `ref` and the derived fields are added. The response serializer (the
 * validation plugin, from the entity or summary schema) orders the properties and writes nulls.
 */
export class Representation {
  private readonly def: ResourceDefinition
  private readonly derived: Array<[string, (e: Row) => unknown]>

  constructor (def: ResourceDefinition) {
    this.def = def
    this.derived = Object.entries(def.api.derived).map(([k, d]) => [k, d.value])
  }

  /** Completes a row into the entity, in place. */
  toEntity (row: Row): Row {
    row.ref = this.def.ref(row.id as string)
    for (const [k, value] of this.derived) row[k] = value(row)
    return row
  }
}
