import type { FieldDescriptor } from './model.js'
import type { CollectionRoute } from './route.js'

/*
 * The parameters of a collection route as JSON Schema, for the OpenAPI document. The
 * request hook checks every parameter before Ajv runs (with messages that name the
 * position in a FIQL expression, the sortable attributes …), so these schemas accept
 * everything the hook accepts: no maximum on `limit` (a larger one is lowered), text
 * for every filter value, and unknown query parameters left to the hook.
 */

type Schema = Record<string, unknown>

const FIQL_HELP = 'FIQL/RSQL: `;` and, `,` or, parentheses group; operators ==, !=, =lt=, =le=, =gt=, =ge=, =in=, =out=, =isnull=, =contains=, =startswith=, =endswith=, =like=, =notlike= and the case-insensitive …ic= variants.'

/** A sort key: a sortable path, with a leading - for descending (no enum when none is sortable, as Ajv refuses an empty one). */
function sortKey (route: CollectionRoute): Schema {
  return route.sortable.length === 0 ? { type: 'string' } : { type: 'string', enum: route.sortable.flatMap((path) => [path, '-' + path]) }
}

function simpleHelp (field: FieldDescriptor): string {
  const text = field.type === 'string' ? '; `*` once as prefix or suffix is a wildcard' : ''
  const array = field.type === 'string-array' ? ' (items containing the value)' : ''
  return `Simple filter: ${field.path} equals the value${array}${text}; repeat for OR; empty for null or "".`
}

function hybridHelp (name: string): string {
  return `Hybrid filter of ${name.slice(0, -'Filter'.length)}: ${FIQL_HELP} Not together with filter.`
}

function pagingHelp (route: CollectionRoute): Record<string, string> {
  return {
    limit: `Page size, at least 1; default ${route.defaultLimit}; above ${route.maxLimit}, ${route.maxLimit} applies.`,
    cursor: 'Cursor paging: the cursor of a next or previous link, as given; absent or empty for the first page.',
    offset: 'Offset paging: the number of items to skip; not together with cursor.',
    totalCount: 'With offset: true to get paging.totalCount, the number of matching items.'
  }
}

/** The `querystring` schema of a GET collection route. */
export function querystringSchema (route: CollectionRoute): Schema {
  const help = pagingHelp(route)
  const properties: Record<string, Schema> = {
    limit: { type: 'integer', minimum: 1, description: help.limit },
    cursor: { type: 'string', description: help.cursor }
  }
  if (route.offset) {
    properties.offset = { type: 'integer', minimum: 0, description: help.offset }
    properties.totalCount = { type: 'boolean', description: help.totalCount }
  }
  properties.ordering = {
    type: 'array',
    items: sortKey(route),
    description: 'Sort by these attributes in priority order, repeated (ordering=a&ordering=-b); a leading - sorts descending.'
  }
  properties.filter = { type: 'string', description: `Advanced filter, ${FIQL_HELP} At most once; not together with <attribute>Filter.` }
  for (const [name, kind] of route.names) {
    if (kind === 'simple') properties[name] = { type: 'array', items: { type: 'string' }, description: simpleHelp(route.fields.get(name) as FieldDescriptor) }
    else if (kind === 'hybrid') properties[name] = { type: 'array', items: { type: 'string' }, description: hybridHelp(name) }
  }
  return { type: 'object', properties, additionalProperties: true }
}

// anyOf rather than a list of types, which Fastify's default Ajv (strict) logs a warning for.
const SCALAR: Schema = { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'null' }] }

/** A paging member, where null means left out. */
function orNull (schema: Schema, description: string | undefined): Schema {
  return { anyOf: [schema, { type: 'null' }], description }
}

function oneOrMany (item: Schema, description: string): Schema {
  return { anyOf: [item, { type: 'array', items: item }], description }
}

/** The `body` schema of a POST search: the same names at the root, paging inside `paging`. */
export function searchBodySchema (route: CollectionRoute): Schema {
  const help = pagingHelp(route)
  const paging: Record<string, Schema> = {
    limit: orNull({ type: 'integer', minimum: 1 }, help.limit),
    cursor: orNull({ type: 'string' }, help.cursor)
  }
  if (route.offset) {
    paging.offset = orNull({ type: 'integer', minimum: 0 }, help.offset)
    paging.totalCount = orNull({ type: 'boolean' }, help.totalCount)
  }
  const properties: Record<string, Schema> = {
    paging: orNull({ type: 'object', properties: paging, additionalProperties: false }, 'Paging, never in the query string of a search.'),
    ordering: oneOrMany(sortKey(route), 'Sort by these attributes in priority order; a leading - sorts descending.'),
    filter: { type: 'string', description: `Advanced filter, ${FIQL_HELP} Not together with <attribute>Filter.` }
  }
  for (const [name, kind] of route.names) {
    if (kind === 'simple') properties[name] = oneOrMany(SCALAR, simpleHelp(route.fields.get(name) as FieldDescriptor))
    else if (kind === 'hybrid') properties[name] = oneOrMany({ type: 'string' }, hybridHelp(name))
  }
  return { type: 'object', properties, additionalProperties: false }
}
