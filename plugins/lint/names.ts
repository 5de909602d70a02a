import type { Collector } from './rules.js'
import { britishSpelling } from './spelling.js'

// Naming rules for properties, 5. A heuristic: plural means ending in `s`, or one of
// these words whose plural has no `s` (or that are uncountable), and `context`, the
// error object's list (Errors: Error object), and `ordering` (Collection endpoints: Sorting).
export const PLURAL_WORDS: ReadonlySet<string> = new Set(['data', 'metadata', 'media', 'criteria', 'people', 'children', 'context', 'ordering'])

const CAMEL_CASE = /^[a-z][a-zA-Z0-9]*$/
// `documentID`, `_id`, `authorUuid`: forms the convention replaces by `id`, `<entity>Id`, `<entity>Ref`.
const IDENTIFIER_FORMS = /(?:ID|_id|_ID|Uuid|UUID|Guid|GUID|Identifier|_ref|REF|Urn|URN)$/
const IDENTIFIER = /^(?:id|ref)$|[a-z0-9](?:Id|Ref)$/

/** What the name rules need to know of a property's schema: its types and formats, with those of its anyOf/oneOf/allOf branches. */
export interface Shape {
  types: ReadonlySet<string>
  formats: ReadonlySet<string>
}

// Naming rules for properties, 8: the words that name a hash. `digest` is left out: it also
// names a summary (a weekly digest).
const HASH_WORDS: ReadonlySet<string> = new Set(['hash', 'hashes', 'checksum', 'checksums', 'md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512', 'crc32'])
// Naming rules for properties, 3. Prepositions that do not also end an adjective or a standard
// name: `by` (createdBy), `in` and `on` (loggedIn, addOn) and `at` are left out. `quantityOf<Unit>`
// is the convention's own form (Quantity).
const PREPOSITIONS: ReadonlySet<string> = new Set(['of', 'for', 'from', 'to', 'with', 'without', 'about', 'into', 'per', 'via'])
const QUANTITY_OF = /^quantityOf[A-Z]/
// Quantity: a count of items is `<item>Count`, not `numberOfPages`, `numPages`, `nbPages` or `totalPages`.
const COUNT_FORMS = /^(?:numberOf|num|nb|total)[A-Z0-9]/

function lastWord (name: string): string {
  const words = name.split(/(?=[A-Z])/)
  return (words[words.length - 1] as string).toLowerCase()
}

/** Name rules that hold for any name, parameters included (`a.b` paths are checked per segment). */
export function checkName (name: string, path: string, out: Collector): void {
  if (!name.split('.').every(part => CAMEL_CASE.test(part) && !/[A-Z]{2}/.test(part))) {
    out.add('property-camel-case', path, `"${name}" is not camelCase with camel-cased acronyms (documentId, imageUrl)`)
  }
  if (IDENTIFIER_FORMS.test(name)) {
    out.add('identifier-name', path, `"${name}" names an identifier or reference: use id, <entity>Id or <entity>Ref`)
  }
  const preposition = QUANTITY_OF.test(name) ? undefined : name.split('.').flatMap(part => part.split(/(?=[A-Z])/)).find(word => PREPOSITIONS.has(word.toLowerCase()))
  if (preposition !== undefined) {
    out.add('preposition-name', path, `"${name}" has the preposition "${preposition}": name it by nouns and adjectives (errorReason, not reasonForError)`)
  }
  if (name.split('.').some(part => part.split(/(?=[A-Z])/).some(word => HASH_WORDS.has(word.toLowerCase())))) {
    out.add('fingerprint-name', path, `"${name}" names a hash: name it fingerprint (or <what>Fingerprint)`)
  }
  const british = britishSpelling(name)
  if (british !== undefined) {
    out.add('american-spelling', path, `"${name}" spells "${british.british}" the British way: names are American English (${british.american})`)
  }
}

/** Name rules that depend on the property's schema. */
export function checkPropertyName (name: string, shape: Shape, path: string, out: Collector): void {
  checkName(name, path, out)
  const { types, formats } = shape
  if (IDENTIFIER.test(name) && (types.has('integer') || types.has('number'))) {
    out.add('identifier-string', path, `"${name}" is an identifier, an opaque string, never a number`)
  }
  if (types.has('boolean') && /^(?:is|has)[A-Z0-9]/.test(name)) {
    out.add('boolean-prefix', path, `the boolean "${name}" has an is/has prefix: name it by the adjective (active, enabled)`)
  }
  // Only a property that is always an array: a "one value or a list" union (search bodies) is not.
  if (types.has('array') && [...types].every(t => t === 'array' || t === 'null') && !name.endsWith('s') && !PLURAL_WORDS.has(lastWord(name))) {
    out.add('array-plural', path, `the array "${name}" has a singular name: use the plural`)
  }
  if ((types.has('integer') || formats.has('int64')) && COUNT_FORMS.test(name) && !name.endsWith('Count')) {
    out.add('count-suffix', path, `the count "${name}" must be named <item>Count (pageCount, not numberOfPages or totalPages)`)
  }
  if (name.endsWith('Percentage') && !(types.has('string') && formats.has('decimal'))) {
    out.add('decimal-string', path, `the percentage "${name}" must be a string with format decimal`)
  }
  const dateTime = formats.has('date-time')
  const date = formats.has('date')
  if (dateTime !== name.endsWith('DateTime')) {
    out.add('date-time-name', path, dateTime ? `the date-time "${name}" must have a name ending in DateTime` : `"${name}" ends in DateTime, so it must have format date-time`)
  } else if (date !== name.endsWith('Date')) {
    out.add('date-time-name', path, date ? `the date "${name}" must have a name ending in Date` : `"${name}" ends in Date, so it must have format date`)
  }
}
