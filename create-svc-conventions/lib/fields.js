// `--resource books title:string pages:integer?`: the first resource of the new service, its
// collection name and its fields, turned into the TypeBox schema its definition is written with.

/** Each field type: the schema it is written as, the builder it imports, and a valid example value. */
export const FIELD_TYPES = {
  string: { schema: 'Type.String({ minLength: 1, maxLength: 200 })', example: name => `Example ${name}` },
  text: { schema: 'Type.String({ maxLength: 10000 })', example: name => `Some ${name}.` },
  integer: { schema: 'Int32({ minimum: 0, maximum: 1000000 })', builder: 'Int32', example: () => 42 },
  decimal: { schema: 'Decimal({ maxIntegerDigits: 15, maxFractionDigits: 4 })', builder: 'Decimal', example: () => '12.50' },
  boolean: { schema: 'Type.Boolean({ default: false })', example: () => true },
  date: { schema: 'DateOnly()', builder: 'DateOnly', example: () => '2025-05-01' },
  // As the service writes it back: milliseconds, UTC.
  'date-time': { schema: 'DateTime()', builder: 'DateTime', example: () => '2025-05-01T10:00:00.000Z' }
}

/** The starter resource, when --resource is not given. */
export const STARTER = { collection: 'books', fields: ['title:string', 'pages:integer?', 'publishedDate:date?'] }

/** What the server sets on every entity: a field of the same name would clash with it. */
const SERVER_FIELDS = ['id', 'ref', 'etag', 'createdDateTime', 'createdBy', 'modifiedDateTime', 'modifiedBy', 'deletedDateTime', 'deletedBy']

export const FIELD_SYNTAX = `<name>:<type>[?], <type> one of ${Object.keys(FIELD_TYPES).join(', ')}; ? makes it optional (null when absent)`

/**
 * `books` → `book`, `categories` → `category`, `addresses` → `address`, `boxes` → `box`,
 * `batches` → `batch`; a name without a plural s stays as it is.
 */
export function singular (collection) {
  if (/ies$/.test(collection)) return collection.slice(0, -3) + 'y'
  // -es after a hissing sound; not after other s-endings, where the e is the word's (houses, cases).
  if (/(ss|x|ch|sh)es$/.test(collection)) return collection.slice(0, -2)
  if (/(ss|us)$/.test(collection) || !collection.endsWith('s')) return collection
  return collection.slice(0, -1)
}

/**
 * The resource described by a collection name and field specs, or `{ error }` saying what is
 * wrong. Names follow the convention: a collection in lowercase (its path is /v1/<collection>),
 * fields in lowerCamelCase.
 */
export function parseResource (collection, specs) {
  if (!/^[a-z][a-z0-9]{0,39}$/.test(collection)) {
    return { error: `--resource ${JSON.stringify(collection)}: a collection name is 1 to 40 lowercase letters and digits, starting with a letter, plural (books, orders)` }
  }
  if (specs.length === 0) return { error: `--resource ${collection}: give at least one field, ${FIELD_SYNTAX} (--resource ${collection} title:string)` }
  const fields = []
  for (const spec of specs) {
    const m = /^([a-z][A-Za-z0-9]{0,62}):([a-z-]+)(\?)?$/.exec(spec)
    if (m === null) return { error: `field ${JSON.stringify(spec)}: write it as ${FIELD_SYNTAX}; names in lowerCamelCase` }
    const [, name, type, optional] = m
    // The lint plugin stops the start on a JSON number: the convention writes a fraction as a decimal string.
    if (type === 'number') return { error: `field ${JSON.stringify(spec)}: the convention writes a number that is not an integer as a string (Decimal); use decimal, or integer` }
    if (!(type in FIELD_TYPES)) return { error: `field ${JSON.stringify(spec)}: unknown type ${JSON.stringify(type)}; one of ${Object.keys(FIELD_TYPES).join(', ')}` }
    if (SERVER_FIELDS.includes(name)) return { error: `field ${JSON.stringify(spec)}: ${name} is set by the server on every entity; choose another name` }
    if (fields.some(f => f.name === name)) return { error: `field ${JSON.stringify(spec)}: ${name} is given twice` }
    const naming = namingRule(name, type)
    if (naming !== undefined) return { error: `field ${JSON.stringify(spec)}: ${naming}` }
    fields.push({ name, type, optional: optional === '?' })
  }
  const name = singular(collection)
  return { collection, name, idParam: `${name}Id`, fields }
}

/**
 * What the convention's naming rules (the lint plugin's, which stop the service's start) say
 * against a field name of a type, or undefined.
 */
function namingRule (name, type) {
  if (/[A-Z]{2}/.test(name)) return 'names are camelCase with acronyms camel-cased too (pdfUrl, not pdfURL)'
  if (type === 'date' && !name.endsWith('Date')) return `the name of a date ends in Date (${name.replace(/Date$/, '')}Date)`
  if (type === 'date-time' && !name.endsWith('DateTime')) return `the name of a date-time ends in DateTime (${name.replace(/Date(Time)?$/, '')}DateTime)`
  if (type === 'boolean' && /^(is|has)[A-Z]/.test(name)) return `a boolean has no is or has prefix (${name.replace(/^(is|has)([A-Z])/, (_, __, c) => c.toLowerCase())})`
  if (name.endsWith('Id') || name.endsWith('Ref')) return 'names ending in Id or Ref are for identifiers and references (see references in the README)'
  return undefined
}

/** The schema of a field, as written in the definition. */
export function fieldSchema (field) {
  const schema = FIELD_TYPES[field.type].schema
  // A boolean has its default; an optional field of another type may be null.
  return field.optional && field.type !== 'boolean' ? `Nullable(${schema})` : schema
}

/** The schema builders of the suite the definition imports, sorted. */
export function builders (resource) {
  const names = new Set(resource.fields.map(f => FIELD_TYPES[f.type].builder).filter(Boolean))
  if (resource.fields.some(f => f.optional && f.type !== 'boolean')) names.add('Nullable')
  return [...names].sort()
}

/** A valid entity for the generated tests and README: every field with an example value. */
export function example (resource) {
  return Object.fromEntries(resource.fields.map(f => [f.name, FIELD_TYPES[f.type].example(f.name)]))
}
