import type { ResourceDefinition } from './define.js'
import { dateTimeSelect } from './columns.js'
import { plainCheck, type PlainCheck } from './plain-json.js'

type Row = Record<string, unknown>

/**
 * The SELECT list that reads a row as the API writes it: date-times as
 * `YYYY-MM-DDTHH:mm:ss.sssZ` in UTC, dates as `YYYY-MM-DD`, decimals and int64 as text,
 * formatted by the database so PGlite and pg give the same strings.
 */
export function selectList (def: ResourceDefinition): string {
  return [
    'id',
    'etag',
    `${dateTimeSelect('"createdDateTime"')} AS "createdDateTime"`,
    '"createdBy"',
    `${dateTimeSelect('"modifiedDateTime"')} AS "modifiedDateTime"`,
    '"modifiedBy"',
    ...def.columns.map(c => c.select)
  ].join(', ')
}

/**
 * Row ↔ API object. A row read with `selectList` already holds the API values under the API
 * names; only `ref` and the derived fields are added. Serialization (fast-json-stringify from
 * the entity schema) orders the properties and writes nulls.
 */
export class Representation {
  private readonly def: ResourceDefinition
  private readonly derived: Array<[string, (e: Row) => unknown]>
  /** Whether a summary is written alike by JSON.stringify and by the summary schema's serializer. */
  readonly plainSummary: PlainCheck

  constructor (def: ResourceDefinition) {
    this.def = def
    this.derived = Object.entries(def.derived).map(([k, d]) => [k, d.value])
    this.plainSummary = plainCheck(def.summaryEntity as unknown as Row)
  }

  /** Completes a row into the entity, in place. */
  toEntity (row: Row): Row {
    row.ref = this.def.ref(row.id as string)
    for (const [k, value] of this.derived) row[k] = value(row)
    return row
  }

  /** The writable fields of an entity, as a merge patch target. */
  writableOf (entity: Row): Row {
    const out: Row = {}
    for (const f of this.def.writable) out[f] = entity[f]
    return out
  }
}
