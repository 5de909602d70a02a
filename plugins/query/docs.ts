import type { FieldDescriptor } from '../../model/query.js'
import type { CollectionRoute } from './route.js'
import { MAX_CURSOR_LENGTH } from './cursor.js'
import { hybridScope } from './hybrid-filter.js'
import { INT32_MAX, INT32_MIN } from '../../schemas/types.js'

/*
 * The parameters of a collection route as JSON Schema, for the OpenAPI document and for
 * Ajv. The request hook checks every parameter first (with messages that name the position
 * in a FIQL expression, the sortable attributes …); the schemas state the same bounds
 * (conventions: "Serialization rules by type": strings with maxLength, integers with
 * minimum and maximum), so Ajv adds only what the hook leaves open: a filter value in its
 * field's own type (JSON types in a search body), and no longer than the FIQL expression
 * limit (`fiql.maxLength`), which bounds simple, hybrid and advanced filter text alike.
 * A `limit` above the route's maximum is lowered, not refused, however large: the hook writes
 * the limit applied over the one sent before Ajv reads it, so the schema keeps int32 bounds.
 */

type Schema = Record<string, unknown>

const FIQL_HELP = 'FIQL/RSQL: `;` and, `,` or, parentheses group; operators ==, !=, =lt=, =le=, =gt=, =ge=, =in=, =out=, =isnull=, =contains=, =startswith=, =endswith=, =like=, =notlike= and the case-insensitive …ic= variants.'

// "Simple filtering" 6: an empty value matches null or "", for every type.
const EMPTY: Schema = { type: 'string', maxLength: 0 }
// The text of a 32-bit integer as values.ts reads it: at most 12 characters.
const INT32_TEXT_LENGTH = 12
// The text of a 64-bit integer as values.ts reads it (leading zeros allowed): at most 40 characters.
const INT64_TEXT_LENGTH = 40

/**
 * Text the hook reads as a 64-bit integer or a decimal. With the suite's validation plugin
 * the convention's `int64` and `decimal` formats say so (and Ajv checks them); Fastify's
 * default Ajv refuses unknown formats, so without it a pattern of what values.ts reads.
 */
function numberText (type: 'int64' | 'decimal', maxLength: number, formats: boolean): Schema {
  if (formats) return { anyOf: [{ type: 'string', format: type, maxLength }, EMPTY] }
  const pattern = type === 'int64' ? '^(?:-?[0-9]+)?$' : '^(?:-?[0-9]+(?:\\.[0-9]+)?)?$'
  return { type: 'string', pattern, maxLength, description: `${type === 'int64' ? 'A 64-bit integer' : 'A decimal'} as a string (format ${type}).` }
}

/**
 * One simple-filter value of `field` as the query string carries it (Ajv coerces query
 * text): the field's own type with its bounds, or the empty value.
 */
function queryValue (field: FieldDescriptor, route: CollectionRoute, formats: boolean): Schema {
  const maxLength = route.limits.maxLength
  switch (field.type) {
    case 'string':
    case 'string-array':
      return { type: 'string', maxLength }
    case 'int32':
      return { anyOf: [{ type: 'integer', minimum: INT32_MIN, maximum: INT32_MAX }, EMPTY] }
    case 'int64':
      return numberText('int64', INT64_TEXT_LENGTH, formats)
    case 'decimal':
      return numberText('decimal', maxLength, formats)
    case 'date':
    case 'date-time':
      return { anyOf: [{ type: 'string', format: field.type }, EMPTY] }
    case 'boolean':
      return { anyOf: [{ type: 'boolean' }, EMPTY] }
    case 'enum':
      return { anyOf: [{ type: 'string', enum: field.enumValues }, EMPTY] }
  }
}

/** One simple-filter value in a search body: the query form, null for the empty value, and the digits of an int32 as text too. */
function bodyValue (field: FieldDescriptor, route: CollectionRoute, formats: boolean): Schema {
  const branches = [queryValue(field, route, formats), { type: 'null' }]
  // The hook reads every value as text: "7" is read like 7 (values.ts).
  if (field.type === 'int32') branches.push({ type: 'string', pattern: '^-?[0-9]*$', maxLength: INT32_TEXT_LENGTH, description: 'A 32-bit integer as a string of digits.' })
  return { anyOf: branches }
}

/**
 * A sort key: a sortable path, with a leading - for descending. With nothing sortable the
 * hook refuses every key; Ajv refuses an empty enum, so the key is then any bounded text.
 * Titled, so the document writes a collection's keys once for its query and its search body.
 */
function sortKey (route: CollectionRoute): Schema {
  return route.sortable.length === 0
    ? { type: 'string', maxLength: route.limits.maxLength }
    : { title: 'SortKey', type: 'string', enum: route.sortable.flatMap((path) => [path, '-' + path]) }
}

// What the simple and hybrid filters share is told once, on `filter` and on the search body, not per attribute.
const SIMPLE_HELP = 'A simple filter (an attribute\'s name) matches what equals its value (an array attribute: an item that does); repeated, any of its values (OR); empty, null or "". A string may start or end with `*`, a wildcard.'
const HYBRID_HELP = '<attribute>Filter: FIQL/RSQL as in filter, not with it, whose one selector is the attribute itself (nameFilter=name==…); on an object, paths inside it.'

const pascal = (path: string): string => path.split(/[^A-Za-z0-9]+/).map(w => w.charAt(0).toUpperCase() + w.slice(1)).join('')

/**
 * The title of a filter value's schema: its type (`DateTimeFilter`), or its field for an enum
 * (`StatusFilter`). The OpenAPI plugin writes a titled schema used more than once as one
 * component of that name.
 */
function filterTitle (field: FieldDescriptor, suffix: string): string {
  const kind = field.type === 'enum' ? pascal(field.path) : pascal(field.type)
  return `${kind}Filter${suffix}`
}

/**
 * Which selectors the hybrid filter `name` of an object attribute takes, as hybrid-filter.ts
 * resolves them: paths inside it. A scalar attribute's own name is its one selector, as
 * HYBRID_HELP says for all of them: it needs no description of its own.
 */
function hybridHelp (name: string, route: CollectionRoute): string | undefined {
  const attribute = name.slice(0, -'Filter'.length)
  const scope = hybridScope(name, route.fields) as { prefix?: string, selector?: string }
  if (scope.selector !== undefined) return undefined
  const inside = [...route.fields.values()].filter(f => f.filterable && f.path.startsWith(`${attribute}.`)).map(f => f.path.slice(attribute.length + 1))
  return `Selectors: paths inside ${attribute}, ${inside.join(', ')} (${name}=${inside[0] as string}==…).`
}

function pagingHelp (route: CollectionRoute): Record<string, string> {
  return {
    limit: `Page size, at least 1; default ${route.defaultLimit}; above ${route.maxLimit}, ${route.maxLimit} applies.`,
    cursor: 'Cursor paging: the cursor of a next or previous link, as given; absent or empty for the first page.',
    offset: 'Offset paging: the number of items to skip; not together with cursor.',
    totalCount: 'With offset: true to get paging.totalCount, the number of matching items.'
  }
}

// A limit above the route's maximum is lowered to it, however large; Ajv reads the one applied (index.ts).
const LIMIT: Schema = { type: 'integer', minimum: 1, maximum: INT32_MAX }
const OFFSET: Schema = { type: 'integer', minimum: 0, maximum: INT32_MAX }
// The codec refuses a longer cursor (cursor.ts).
const CURSOR: Schema = { type: 'string', maxLength: MAX_CURSOR_LENGTH }

/** A FIQL expression (`filter`, `<attribute>Filter`), bounded by the route's FIQL limits. */
function fiql (route: CollectionRoute): Schema {
  return { type: 'string', maxLength: route.limits.maxLength }
}

/** A parameter that may repeat, as many times as the hook allows (`fiql.maxListSize`). */
function repeated (items: Schema, route: CollectionRoute, description?: string): Schema {
  return { type: 'array', items, maxItems: route.limits.maxListSize, description }
}

/**
 * The `querystring` schema of a GET collection route. `formats`: the suite's Ajv formats
 * (`decimal`, `int64`) are known to the validator compiler (the validation plugin is registered).
 */
export function querystringSchema (route: CollectionRoute, formats: boolean): Schema {
  const help = pagingHelp(route)
  const properties: Record<string, Schema> = {
    limit: { ...LIMIT, description: help.limit },
    cursor: { ...CURSOR, description: help.cursor }
  }
  if (route.offset) {
    properties.offset = { ...OFFSET, description: help.offset }
    properties.totalCount = { type: 'boolean', description: help.totalCount }
  }
  properties.ordering = repeated(sortKey(route), route, 'Sort by these attributes in priority order, repeated (ordering=a&ordering=-b); a leading - sorts descending.')
  properties.filter = { ...fiql(route), description: `Advanced filter, ${FIQL_HELP} At most once. ${SIMPLE_HELP} ${HYBRID_HELP}` }
  for (const [name, kind] of route.names) {
    if (kind === 'simple') {
      const field = route.fields.get(name) as FieldDescriptor
      properties[name] = { title: filterTitle(field, 'Query'), ...repeated(queryValue(field, route, formats), route) }
    } else if (kind === 'hybrid') {
      properties[name] = { title: 'FiqlFilterQuery', ...repeated(fiql(route), route, hybridHelp(name, route)) }
    }
  }
  return { type: 'object', properties, additionalProperties: true }
}

/** A paging member, where null means left out. */
function orNull (schema: Schema, description: string | undefined): Schema {
  return { anyOf: [schema, { type: 'null' }], description }
}

function oneOrMany (item: Schema, route: CollectionRoute, description: string): Schema {
  return { anyOf: [item, { type: 'array', items: item, maxItems: route.limits.maxListSize }], description }
}

/** The `body` schema of a POST search: the same names at the root, paging inside `paging`; `formats` as above. */
export function searchBodySchema (route: CollectionRoute, formats: boolean): Schema {
  const help = pagingHelp(route)
  const paging: Record<string, Schema> = {
    limit: orNull(LIMIT, help.limit),
    cursor: orNull(CURSOR, help.cursor)
  }
  if (route.offset) {
    paging.offset = orNull(OFFSET, help.offset)
    paging.totalCount = orNull({ type: 'boolean' }, help.totalCount)
  }
  const properties: Record<string, Schema> = {
    paging: orNull({ title: 'SearchPaging', type: 'object', properties: paging, additionalProperties: false }, 'Paging, never in the query string of a search.'),
    ordering: oneOrMany(sortKey(route), route, 'Sort by these attributes in priority order; a leading - sorts descending.'),
    filter: { ...fiql(route), description: 'Advanced filter, FIQL/RSQL as the filter parameter of the collection\'s GET tells; not together with <attribute>Filter.' }
  }
  for (const [name, kind] of route.names) {
    if (kind === 'simple') {
      const field = route.fields.get(name) as FieldDescriptor
      const { description: _d, ...values } = oneOrMany(bodyValue(field, route, formats), route, '')
      properties[name] = { title: filterTitle(field, 'Search'), ...values }
    } else if (kind === 'hybrid') {
      const { description: _d, ...expression } = oneOrMany(fiql(route), route, '')
      properties[name] = { title: 'FiqlFilterSearch', ...expression }
    }
  }
  // The attributes are described once, on the GET's filter parameter.
  return {
    type: 'object',
    properties,
    additionalProperties: false,
    description: 'The query parameters of the collection\'s GET (as its filter parameter tells), as JSON: paging inside paging, several values as an array, null for the empty value.'
  }
}
