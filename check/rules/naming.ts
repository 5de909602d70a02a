// Property names and value forms, read from every JSON answer the check saw (conventions:
// Naming rules for properties, Standard properties, URN-like references, Serialization rules by type).
import { fail, notApplicable, pass, type Context, type Outcome } from '../context.js'
import { pointer } from '../openapi.js'
import type { Exchange } from '../types.js'
import type { Rule } from './rule.js'

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const CAMEL = /^[a-z][a-zA-Z0-9]*$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/
const DATE = /^\d{4}-\d{2}-\d{2}$/
const REF = /^([a-z]{1,10}):([a-z0-9]{1,20}):([a-z0-9]{0,20}):(.+)$/
const ENUM_VALUE = /^[A-Z0-9_]+$/
// A context item's `source`, whose values the convention itself writes in lower case.
const SOURCES = new Set(['body', 'query', 'header', 'path'])
// Array names that are plural without a final s, and the problem body's `context`, which the
// convention itself names.
const PLURAL_WITHOUT_S = new Set(['context', 'data', 'media', 'criteria', 'phenomena', 'children', 'people', 'men', 'women', 'feet', 'teeth', 'mice', 'geese', 'indices', 'matrices', 'vertices', 'appendices', 'metadata'])

/** A key as a JSON pointer writes it (RFC 6901). */
const escaped = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1')

/** Whether an array's name reads as plural: its last word ends in s, or is a plural without one. */
export function pluralName (key: string): boolean {
  const last = (key.match(/[A-Z]?[a-z0-9]+$/)?.[0] ?? key).toLowerCase()
  return (last.endsWith('s') && !last.endsWith('ss') && !last.endsWith('us')) || PLURAL_WITHOUT_S.has(last)
}

/**
 * Every string `enum` of the bodies a document describes (requests and answers), with the JSON
 * pointer where it is written; `$ref`s followed once each. Parameters (and a search body's
 * `ordering`) are left out: their enums are sort keys and attribute names, not values. So are
 * webhook consumers (under `/_webhooks/`) and operations marked `x-internal`: their payloads are
 * the producer's, which need not follow the convention.
 */
function enums (doc: Record<string, unknown>): Array<[string, string]> {
  const out: Array<[string, string]> = []
  const followed = new Set<string>()
  const walk = (value: unknown, at: string): void => {
    if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) walk(v, `${at}/${i}`)
      return
    }
    if (!isObject(value)) return
    if (typeof value.$ref === 'string' && !followed.has(value.$ref)) {
      followed.add(value.$ref)
      walk(pointer(doc, value.$ref), value.$ref)
    }
    for (const [k, v] of Object.entries(value)) {
      // `ordering` in a search body is the query parameter's sort keys again.
      if (k === 'parameters' || k === 'ordering' || k === 'examples' || k === 'example' || k === 'default' || k === '$ref') continue
      const here = `${at}/${escaped(k)}`
      if (k === 'enum' && Array.isArray(v)) {
        if (!v.every(e => SOURCES.has(e))) for (const e of v) if (typeof e === 'string') out.push([here, e])
      } else {
        walk(v, here)
      }
    }
  }
  for (const [path, item] of Object.entries(isObject(doc.paths) ? doc.paths : {})) {
    if (path.includes('/_webhooks/')) continue
    for (const [key, op] of Object.entries(isObject(item) ? item : {})) {
      // One member at a time, so that the walk leaves out what it leaves out anywhere (parameters).
      if (!(isObject(op) && op['x-internal'] === true)) walk({ [key]: op }, `#/paths/${escaped(path)}`)
    }
  }
  return out
}

/** Every (object, key, value) of a JSON value, depth first. */
function * entries (value: unknown): Generator<[Record<string, unknown>, string, unknown]> {
  if (Array.isArray(value)) {
    for (const v of value) yield * entries(v)
  } else if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      yield [value, k, v]
      yield * entries(v)
    }
  }
}

/** The JSON bodies of successful answers: what the service produces, not what it refuses. */
function bodies (ctx: Context): Exchange[] {
  // The OpenAPI document describes the answers; its own keys ($ref, schema names) are not one.
  return ctx.http.exchanges.filter(e => e.response.status >= 200 && e.response.status < 300 && e.response.json !== undefined && /json/i.test(e.response.headers['content-type'] ?? '') &&
    typeof (e.response.json as { openapi?: unknown }).openapi !== 'string')
}

/** The first property of any body that `bad` says is wrong, as a failure. */
function scan (ctx: Context, bad: (obj: Record<string, unknown>, key: string, value: unknown) => string | null, none: string, applies: (key: string, value: unknown) => boolean = () => true): Outcome {
  let seen = 0
  for (const ex of bodies(ctx)) {
    for (const [obj, key, value] of entries(ex.response.json)) {
      if (!applies(key, value)) continue
      seen++
      const reason = bad(obj, key, value)
      if (reason !== null) return fail(reason, ex)
    }
  }
  return seen === 0 ? notApplicable(none) : pass()
}

export const namingRules: Rule[] = [
  {
    id: 'naming.property-names',
    section: 'Naming rules for properties',
    title: 'property names are camelCase, acronyms too; booleans without is/has',
    observes: true,
    run: async (ctx) => scan(ctx, (_obj, key, value) => {
      if (!CAMEL.test(key) || /[A-Z]{2}/.test(key)) return `the property ${JSON.stringify(key)} is not camelCase`
      if (typeof value === 'boolean' && /^(is|has)[A-Z]/.test(key)) return `the boolean ${JSON.stringify(key)} starts with is or has`
      return null
    }, 'no JSON answer was seen')
  },
  {
    id: 'naming.standard-properties',
    section: 'Standard properties',
    title: 'id and <entity>Id are strings; ref is {namespace}:{entity}:{sub-entity}:{id} with the id of its entity',
    observes: true,
    run: async (ctx) => scan(ctx, (obj, key, value) => {
      if ((key === 'id' || key.endsWith('Id')) && typeof value !== 'string' && value !== null) return `the identifier ${key} is ${JSON.stringify(value)}, not a string`
      if (key === 'ref' && value !== null) {
        const m = REF.exec(String(value))
        if (m === null || String(value).length > 255) return `the ref ${JSON.stringify(value)} is not {namespace}:{entity}:{sub-entity}:{id}`
        if (typeof obj.id === 'string' && m[4] !== obj.id) return `the ref ${JSON.stringify(value)} does not end with the id ${obj.id}`
      }
      return null
    }, 'no answer had an id or a ref', key => key === 'id' || key === 'ref' || key.endsWith('Id'))
  },
  {
    id: 'naming.plural-arrays',
    section: 'Naming rules for properties',
    title: 'arrays have plural names',
    observes: true,
    run: async (ctx) => scan(ctx, (_obj, key) => pluralName(key) ? null : `the array ${JSON.stringify(key)} has a singular name`,
      'no JSON answer held an array property', (_key, value) => Array.isArray(value))
  },
  {
    id: 'naming.enums',
    section: 'Serialization rules by type',
    title: 'enum values are upper-case alphanumerics and underscore (PURCHASE_ORDER)',
    async run (ctx) {
      if (ctx.document === null) return notApplicable('no OpenAPI document to read the enums of (--openapi)')
      const found = enums(ctx.document)
      const bad = found.find(([, value]) => !ENUM_VALUE.test(value))
      if (bad !== undefined) return fail(`the enum value ${JSON.stringify(bad[1])} at ${bad[0]} is not upper-case alphanumerics and underscore`)
      return found.length === 0 ? notApplicable('the document describes no body with an enum of strings') : pass()
    }
  },
  {
    id: 'naming.english',
    section: 'Naming rules for properties',
    title: 'names are correct American English nouns or adjectives',
    unobservable: 'it takes a reader of English, not a probe'
  },
  {
    id: 'serialization.date-times',
    section: 'Serialization rules by type',
    title: '…DateTime values are ISO 8601 in UTC (YYYY-MM-DDTHH:mm:ss[.sss]Z), …Date values YYYY-MM-DD',
    observes: true,
    run: async (ctx) => scan(ctx, (_obj, key, value) => {
      if (value === null) return null
      if (key.endsWith('DateTime') && (typeof value !== 'string' || !DATE_TIME.test(value))) return `${key} is ${JSON.stringify(value)}, not a UTC date-time`
      if (key.endsWith('Date') && (typeof value !== 'string' || !DATE.test(value))) return `${key} is ${JSON.stringify(value)}, not YYYY-MM-DD`
      return null
    }, 'no answer had a …DateTime or …Date property', key => key.endsWith('DateTime') || key.endsWith('Date'))
  },
  {
    id: 'serialization.decimals',
    section: 'Serialization rules by type',
    title: 'decimals, percentages and 64-bit integers are strings, never JSON numbers',
    observes: true,
    async run (ctx) {
      // The document's decimal and int64 properties, and percentages by their name.
      const typed = new Set(ctx.model.collections.flatMap(c => c.numericStrings))
      return scan(ctx, (_obj, key, value) => value === null || typeof value === 'string' ? null : `${key} is ${JSON.stringify(value)}, not a string`,
        'no answer had a decimal, percentage or 64-bit integer property', key => typed.has(key) || key.endsWith('Percentage'))
    }
  }
]
