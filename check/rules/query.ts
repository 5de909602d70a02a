// Filters, ordering and search by POST (conventions: Simple filtering, Advanced filtering,
// Sorting, Search by POST), on the attributes the document offers.
import { contextOf, fail, isEnvelope, notApplicable, notChecked, pass, statusFault, type Context, type Item, type Sample } from '../context.js'
import { resolve } from '../openapi.js'
import type { Exchange } from '../types.js'
import type { Rule } from './rule.js'

const ids = (items: Item[]): string[] => items.map(i => String(i.id))
const itemsOf = (ex: Exchange): Item[] | null => ex.response.status === 200 && isEnvelope(ex.response.json) ? ex.response.json.results : null

/** A sample item and a string attribute the collection filters on, preferring id and name. */
function filterable (ctx: Context, names: (s: Sample) => string[]): { s: Sample, item: Item, name: string, value: string } | null {
  for (const s of ctx.samples) {
    const offered = names(s).sort((a, b) => rank(a) - rank(b))
    for (const item of s.items) {
      const name = offered.find(n => typeof item[n] === 'string' && item[n] !== '' && !String(item[n]).includes('*'))
      if (name !== undefined) return { s, item, name, value: item[name] as string }
    }
  }
  return null
}
const rank = (name: string): number => name === 'id' ? 0 : name === 'name' ? 1 : 2

/** FIQL quotes a value with characters outside its unreserved set. */
const fiqlValue = (v: string): string => /^[A-Za-z0-9._~:-]+$/.test(v) ? v : `"${v.replace(/["\\]/g, '\\$&')}"`

function noDocument (ctx: Context): string | null {
  return ctx.model.documentSource === null ? 'no OpenAPI document says what the collections offer (--openapi)' : null
}

export const queryRules: Rule[] = [
  {
    id: 'filters.simple',
    section: 'Simple filtering',
    title: 'a simple filter selects the items with that value; an invalid value is a 400 INPUT_INVALID naming it',
    async run (ctx) {
      const why = noDocument(ctx)
      if (why !== null) return notApplicable(why)
      const found = filterable(ctx, s => s.collection.simpleFilters.map(f => f.name))
      if (found === null) return notApplicable('no collection with items offers a simple filter on a string attribute')
      const { s, item, name, value } = found
      const ex = await ctx.http.send({ path: `${s.collection.path}?${name}=${encodeURIComponent(value)}` })
      const items = itemsOf(ex)
      if (items === null) return fail(`${name}=${value}: expected 200 with the envelope`, ex)
      if (!ids(items).includes(String(item.id))) return fail(`${name}=${value} left out the item that has it`, ex)
      if (items.some(i => i[name] !== value)) return fail(`${name}=${value} kept items with another ${name}`, ex)
      // A typed filter (boolean, integer) given a value it cannot take.
      const typed = s.collection.simpleFilters.find(f => ['boolean', 'integer'].includes(String(typeOf(ctx, f.schema))))
      if (typed === undefined) return pass()
      const bad = await ctx.http.send({ path: `${s.collection.path}?${typed.name}=svc-check-not-a-value` })
      const fault = statusFault(bad, 400)
      if (fault !== null) return fail(`${typed.name}=svc-check-not-a-value: ${fault}`, bad)
      if (!contextOf(bad).some(c => c.code === 'INPUT_INVALID' && c.field === typed.name)) return fail(`no context item INPUT_INVALID naming ${typed.name}`, bad)
      return pass()
    }
  },
  {
    id: 'filters.fiql',
    section: 'Advanced filtering',
    title: 'a FIQL filter selects the matching items; a malformed one is a 400 INPUT_INVALID',
    async run (ctx) {
      const why = noDocument(ctx)
      if (why !== null) return notApplicable(why)
      const found = filterable(ctx, s => s.collection.fiql === true ? s.collection.simpleFilters.map(f => f.name) : [])
      if (found === null) return notApplicable('no collection with items offers the filter parameter on a string attribute')
      const { s, item, name, value } = found
      const ex = await ctx.http.send({ path: `${s.collection.path}?filter=${encodeURIComponent(`${name}==${fiqlValue(value)}`)}` })
      const items = itemsOf(ex)
      if (items === null) return fail(`filter=${name}==${value}: expected 200 with the envelope`, ex)
      if (!ids(items).includes(String(item.id)) || items.some(i => i[name] !== value)) return fail(`filter=${name}==${value} did not select exactly the items with that ${name}`, ex)
      const bad = await ctx.http.send({ path: `${s.collection.path}?filter=${encodeURIComponent(`${name}=svccheck=x`)}` })
      const fault = statusFault(bad, 400)
      if (fault !== null) return fail(`an unknown FIQL operator: ${fault}`, bad)
      if (!contextOf(bad).some(c => c.code === 'INPUT_INVALID')) return fail('no context item INPUT_INVALID', bad)
      return pass()
    }
  },
  {
    id: 'sorting.ordering',
    section: 'Sorting',
    title: 'ordering=<attribute> sorts ascending, -<attribute> descending; an unknown attribute is a 400',
    async run (ctx) {
      const why = noDocument(ctx)
      if (why !== null) return notApplicable(why)
      const s = ctx.samples.find(s => s.collection.ordering.length > 0 && s.items.length >= 2)
      if (s === undefined) return notApplicable('no collection with 2 items or more offers ordering')
      const keys = s.collection.ordering.filter(k => !k.includes('.') && s.items.every(i => typeof i[k] === 'string' || typeof i[k] === 'number'))
      // Date-times in UTC compare as text, whatever the service's collation.
      const key = keys.find(k => k.endsWith('DateTime')) ?? keys.find(k => s.items.every(i => typeof i[k] === 'number'))
      if (key === undefined) return notApplicable('no sort key with comparable values')
      for (const [sign, ok] of [['', (a: unknown, b: unknown) => (a as number) <= (b as number)], ['-', (a: unknown, b: unknown) => (a as number) >= (b as number)]] as const) {
        const ex = await ctx.http.send({ path: `${s.collection.path}?ordering=${sign}${key}&limit=${Math.max(s.items.length, 2)}` })
        const items = itemsOf(ex)
        if (items === null) return fail(`ordering=${sign}${key}: expected 200 with the envelope`, ex)
        if (items.some((it, i) => i > 0 && !ok(items[i - 1]?.[key], it[key]))) return fail(`ordering=${sign}${key}: not sorted ${sign === '' ? 'ascending' : 'descending'}`, ex)
      }
      const bad = await ctx.http.send({ path: `${s.collection.path}?ordering=svcConventionsCheckNoSuchField` })
      const fault = statusFault(bad, 400)
      return fault === null ? pass() : fail(`an unknown sort attribute: ${fault}`, bad)
    }
  },
  {
    id: 'search.post',
    section: 'Search by POST',
    title: 'POST <collection>/search answers the collection envelope, as the GET does',
    async run (ctx) {
      const why = noDocument(ctx)
      if (why !== null) return notApplicable(why)
      const s = ctx.samples.find(s => s.collection.search && isEnvelope(s.exchange.response.json))
      if (s === undefined) return notApplicable('the document offers no search on a collection that answered')
      if (!ctx.writes) return notChecked('a POST: sent only with --writes')
      const ex = await ctx.http.send({ method: 'POST', path: `${s.collection.path}/search`, headers: { 'content-type': 'application/json' }, body: '{}' })
      const items = itemsOf(ex)
      if (items === null) return fail('expected 200 with the envelope', ex)
      const got = await ctx.http.send({ path: s.collection.path })
      const expected = itemsOf(got) ?? []
      return ids(items).join() === ids(expected).join() ? pass() : fail('the search without criteria did not answer the first page the GET does', ex)
    }
  }
]

function typeOf (ctx: Context, schema: Record<string, unknown>): unknown {
  const s = resolve(ctx.document ?? {}, schema)
  if (Array.isArray(s.anyOf)) return typeOf(ctx, resolve(ctx.document ?? {}, s.anyOf[0]))
  return Array.isArray(s.type) ? s.type.find(t => t !== 'null') : s.type === 'array' ? typeOf(ctx, resolve(ctx.document ?? {}, s.items)) : s.type
}
