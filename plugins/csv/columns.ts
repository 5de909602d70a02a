/*
 * The columns of a CSV page come from the item's JSON schema, in the schema's own order:
 * a scalar or array property is one column; an object property (nullable or not) gives
 * one column per property inside it, named by its dotted path (`metadata.source.system`).
 */

/** One CSV column: its header name and the path of property names to its value. */
export interface Column {
  readonly name: string
  readonly path: readonly string[]
}

type Schema = Record<string, unknown>

function isObject (value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The properties of an object schema, or of the one object branch of a nullable union; null for any other schema. */
function propertiesOf (schema: Schema): Schema | null {
  if (isObject(schema.properties)) return schema.properties
  const branches = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : []
  const objects = branches.filter((b): b is Schema => isObject(b) && isObject(b.properties))
  return objects.length === 1 ? (objects[0] as Schema).properties as Schema : null
}

function collect (properties: Schema, prefix: readonly string[], out: Column[]): void {
  for (const [key, value] of Object.entries(properties)) {
    const path = [...prefix, key]
    const inner = isObject(value) ? propertiesOf(value) : null
    if (inner !== null && Object.keys(inner).length > 0) collect(inner, path, out)
    else out.push({ name: path.join('.'), path })
  }
}

/** The columns of items of `schema` (an object schema); throws a TypeError when it has no properties. */
export function columnsOf (schema: unknown): Column[] {
  const properties = isObject(schema) ? propertiesOf(schema) : null
  if (properties === null || Object.keys(properties).length === 0) throw new TypeError('the item schema must be an object schema with properties')
  const out: Column[] = []
  collect(properties, [], out)
  return out
}

/**
 * The item schema of a collection response: `results.items` of the 200 schema, as the
 * query plugin's envelope (`Collection(item)`) declares it; null when it has none.
 */
export function itemSchemaOf (response: unknown): unknown {
  if (!isObject(response)) return null
  const ok = response[200] ?? response['2xx']
  if (!isObject(ok) || !isObject(ok.properties)) return null
  const results = ok.properties.results
  return isObject(results) && isObject(results.items) ? results.items : null
}
