import type { FieldDescriptor, FieldMap, FieldType } from './query.js'

/** Nested names use periods, at most three levels (conventions: "Simple filtering" 4, "Limits"). */
export const MAX_PATH_DEPTH = 3

const FIELD_TYPES: ReadonlySet<string> = new Set<FieldType>([
  'string', 'int32', 'int64', 'decimal', 'date', 'date-time', 'boolean', 'enum', 'string-array'
])

/** A descriptor as the resource layer writes it; omitted flags take the defaults noted. */
export interface FieldInit {
  path: string
  type: FieldType
  enumValues?: readonly string[]
  /** Default false. */
  nullable?: boolean
  /** Default true. */
  filterable?: boolean
  /** Default false. */
  sortable?: boolean
  /** Default true; false for text whose text order means nothing (see `FieldDescriptor.ordered`). */
  ordered?: boolean
}

function isNameChar (code: number, first: boolean): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || code === 95 ||
    (!first && code >= 48 && code <= 57)
}

/** Number of levels of a well-formed path (`a`, `a.b`, `aB_1.c`), or 0 when malformed. */
export function pathDepth (path: string): number {
  let depth = 1
  let first = true
  for (let i = 0; i < path.length; i++) {
    const code = path.charCodeAt(i)
    if (code === 46 && !first) {
      depth++
      first = true
    } else if (isNameChar(code, first)) {
      first = false
    } else {
      return 0
    }
  }
  return first ? 0 : depth
}

/** Validates descriptors once, at setup; throws a TypeError naming the bad one. */
export function createFieldMap (fields: readonly FieldInit[]): FieldMap {
  const map = new Map<string, FieldDescriptor>()
  for (const init of fields) {
    const depth = pathDepth(init.path)
    if (depth === 0 || depth > MAX_PATH_DEPTH) {
      throw new TypeError(`query fields: path must be a name of at most ${MAX_PATH_DEPTH} period-separated levels, got ${JSON.stringify(init.path)}`)
    }
    if (map.has(init.path)) throw new TypeError(`query fields: path ${init.path} is listed twice`)
    if (!FIELD_TYPES.has(init.type)) throw new TypeError(`query fields: ${init.path}.type must be a field type, got ${JSON.stringify(init.type)}`)
    if (init.type === 'enum' && (!Array.isArray(init.enumValues) || init.enumValues.length === 0)) {
      throw new TypeError(`query fields: ${init.path}.enumValues must list the enum's values`)
    }
    const sortable = init.sortable ?? false
    if (sortable && init.type === 'string-array') throw new TypeError(`query fields: ${init.path} is an array and cannot be sortable`)
    const ordered = init.ordered ?? true
    if (!ordered && init.type !== 'string') throw new TypeError(`query fields: ${init.path}.ordered may be false on a string field only`)
    if (sortable && !ordered) throw new TypeError(`query fields: ${init.path} has no meaningful order and cannot be sortable`)
    const descriptor: FieldDescriptor = {
      path: init.path,
      type: init.type,
      nullable: init.nullable ?? false,
      filterable: init.filterable ?? true,
      sortable,
      ordered
    }
    map.set(init.path, init.type === 'enum' ? { ...descriptor, enumValues: [...(init.enumValues as readonly string[])] } : descriptor)
  }
  return map
}

/** The value at a period-separated path of an API-shaped object; null when absent. */
export function readPath (item: unknown, path: string): unknown {
  if (path.indexOf('.') === -1) return (item as Record<string, unknown>)[path] ?? null
  let value: unknown = item
  for (const name of path.split('.')) {
    if (value === null || typeof value !== 'object') return null
    value = (value as Record<string, unknown>)[name]
  }
  return value ?? null
}

/** The subset of JSON Schema (as TypeBox writes it) that fieldsFromSchema reads. */
interface SchemaNode {
  type?: string | string[]
  format?: string
  enum?: unknown[]
  const?: unknown
  anyOf?: SchemaNode[]
  oneOf?: SchemaNode[]
  items?: SchemaNode
  properties?: Record<string, SchemaNode>
  required?: string[]
}

interface Shape {
  type: FieldType | 'object'
  nullable: boolean
  /** False for a string format whose text order means nothing. */
  unordered?: true
  enumValues?: string[]
  properties?: Record<string, SchemaNode>
  required?: string[]
}

function isNullSchema (node: SchemaNode): boolean {
  return node.type === 'null'
}

function allStrings (values: unknown[]): values is string[] {
  return values.length > 0 && values.every((v) => typeof v === 'string')
}

const STRING_FORMATS: Record<string, FieldType> = {
  'date-time': 'date-time',
  date: 'date',
  decimal: 'decimal',
  int64: 'int64'
}

/** The suite's string formats compared as text only: equal or not, never less or greater. */
const UNORDERED_FORMATS: ReadonlySet<string> = new Set(['duration', 'interval', 'cron'])

/** What a property schema is, or undefined when it is not filterable (numbers, arrays of objects …). */
function shapeOf (node: SchemaNode): Shape | undefined {
  const union = node.anyOf ?? node.oneOf
  if (union !== undefined) {
    const members = union.filter((m) => !isNullSchema(m))
    const nullable = members.length < union.length
    const consts = members.map((m) => m.const)
    if (allStrings(consts) && consts.length === members.length) return { type: 'enum', nullable, enumValues: consts }
    if (members.length !== 1) return undefined
    const inner = shapeOf(members[0] as SchemaNode)
    return inner === undefined ? undefined : { ...inner, nullable: inner.nullable || nullable }
  }
  let type = node.type
  let nullable = false
  if (Array.isArray(type)) {
    const types = type.filter((t) => t !== 'null')
    nullable = types.length < type.length
    if (types.length !== 1) return undefined
    type = types[0]
  }
  switch (type) {
    case 'string': {
      if (node.enum !== undefined) return allStrings(node.enum) ? { type: 'enum', nullable, enumValues: node.enum } : undefined
      if (typeof node.const === 'string') return { type: 'enum', nullable, enumValues: [node.const] }
      if (UNORDERED_FORMATS.has(node.format ?? '')) return { type: 'string', nullable, unordered: true }
      return { type: STRING_FORMATS[node.format ?? ''] ?? 'string', nullable }
    }
    case 'integer':
      return { type: node.format === 'int64' ? 'int64' : 'int32', nullable }
    case 'boolean':
      return { type: 'boolean', nullable }
    case 'array': {
      const items = node.items === undefined ? undefined : shapeOf(node.items)
      return items !== undefined && (items.type === 'string' || items.type === 'enum') && !items.nullable
        ? { type: 'string-array', nullable }
        : undefined
    }
    case 'object':
      return node.properties === undefined ? undefined : { type: 'object', nullable, properties: node.properties, required: node.required ?? [] }
    default:
      return undefined
  }
}

export interface FieldsFromSchemaOptions {
  /** Paths usable in filters; `true` (default) for every path the schema allows. */
  filterable?: readonly string[] | true
  /** Paths usable in `ordering` (default none; the id tiebreaker needs no listing). */
  sortable?: readonly string[]
  /**
   * Whether a path can be queried; false leaves it out of the map, as a path that is not
   * stored (derived fields such as `ref`) cannot be filtered on. Default: every path.
   */
  queryable?: (path: string) => boolean
  /** The unique, non-null identifier path, always kept in the map (default `id`). */
  idField?: string
}

/**
 * Derives the field map of a TypeBox object schema: scalar properties, arrays of
 * strings and properties of nested objects up to three levels, typed by the suite's
 * formats (`date-time`, `date`, `decimal`, `int64`), `integer`, `enum`/`const` unions;
 * nullable through `type: [..., 'null']`, a null member of `anyOf`, being optional or
 * lying under a nullable or optional object.
 */
export function fieldsFromSchema (schema: object, options: FieldsFromSchemaOptions = {}): FieldMap {
  const queryable = options.queryable ?? (() => true)
  const idField = options.idField ?? 'id'
  const sortable = new Set(options.sortable ?? [])
  const filterable = options.filterable === true || options.filterable === undefined ? true : new Set(options.filterable)
  const found = new Map<string, { type: FieldType, nullable: boolean, enumValues?: string[], unordered?: true }>()

  function walk (node: Required<Pick<Shape, 'properties' | 'required'>>, prefix: string, depth: number, nullableParent: boolean): void {
    const required = new Set(node.required)
    for (const [name, child] of Object.entries(node.properties)) {
      const shape = shapeOf(child)
      if (shape === undefined) continue
      const path = prefix + name
      const nullable = nullableParent || shape.nullable || !required.has(name)
      if (shape.type === 'object') {
        if (depth < MAX_PATH_DEPTH) walk(shape as Required<Shape>, path + '.', depth + 1, nullable)
      } else {
        found.set(path, { ...shape, type: shape.type, nullable })
      }
    }
  }
  const root = shapeOf(schema as SchemaNode)
  if (root?.type !== 'object') throw new TypeError('fieldsFromSchema: schema must be an object schema with properties')
  walk(root as Required<Shape>, '', 1, false)

  for (const [option, paths] of [['filterable', filterable === true ? [] : filterable], ['sortable', sortable]] as const) {
    for (const path of paths) {
      if (!found.has(path)) throw new TypeError(`fieldsFromSchema: ${option} lists ${JSON.stringify(path)}, which is not a filterable path of the schema`)
    }
  }
  if (!found.has(idField)) throw new TypeError(`fieldsFromSchema: idField ${JSON.stringify(idField)} is not a property of the schema`)

  const inits: FieldInit[] = []
  for (const [path, shape] of found) {
    const isFilterable = filterable === true || filterable.has(path)
    if (!isFilterable && !sortable.has(path) && path !== idField) continue
    if (!queryable(path)) {
      // Only paths picked by default may be left out; a listed one is a setup mistake.
      if (path === idField || sortable.has(path) || filterable !== true) {
        throw new TypeError(`fieldsFromSchema: queryable() is false for ${JSON.stringify(path)}, which is the id or listed`)
      }
      continue
    }
    const init: FieldInit = { path, type: shape.type, nullable: shape.nullable, filterable: isFilterable, sortable: sortable.has(path) }
    if (shape.enumValues !== undefined) init.enumValues = shape.enumValues
    if (shape.unordered === true) init.ordered = false
    inits.push(init)
  }
  return createFieldMap(inits)
}
