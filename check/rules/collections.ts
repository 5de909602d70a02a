// Collections: the envelope, limit bounds, cursor and offset paging, ETags and 304
// (conventions: Collection response envelope, Collection endpoints, ETags with collections).
import { contextOf, enveloped, fail, isEnvelope, itemPath, notApplicable, notChecked, pass, sampleWith, statusFault, statusShown, type Context, type Item, type Outcome, type Sample } from '../context.js'
import type { Exchange } from '../types.js'
import type { Rule } from './rule.js'

const ENVELOPE = 'Collection response envelope'
const COLLECTIONS = 'Collection endpoints'

type Paging = Record<string, unknown>
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const ids = (items: Item[]): string[] => items.map(i => String(i.id))

/** The page of an answer, or null when it has not the envelope. */
function pageOf (ex: Exchange): { items: Item[], paging: Paging } | null {
  const body = ex.response.json
  return ex.response.status === 200 && isEnvelope(body) ? { items: body.results, paging: body.paging } : null
}

/** What is wrong with an envelope, or null. */
function envelopeFault (ex: Exchange): string | null {
  if (ex.response.status !== 200) return `expected 200, got ${statusShown(ex.response.status)}`
  const body = ex.response.json
  if (Array.isArray(body)) return 'the root is a bare array'
  if (!isEnvelope(body)) return 'no results array and paging object at the root'
  if (!Number.isInteger(body.paging.limit)) return 'paging.limit is not an integer'
  for (const side of ['next', 'previous']) {
    const link = body.paging[side]
    if (link !== null && link !== undefined && (!isObject(link) || typeof link.url !== 'string')) return `paging.${side} is neither null nor {url}`
  }
  return null
}

/** Every sample needs a token when the service refused the first page without one. */
function unauthorized (ctx: Context): Outcome | null {
  return !ctx.hasToken && ctx.samples.length > 0 && ctx.samples.every(s => s.exchange.response.status === 401) ? notChecked('the collections answer 401: needs --token') : null
}

/**
 * A page link as a URL on the base's origin, or null when it points elsewhere: another scheme,
 * host or port is another service, which gets no request (and no token).
 */
function local (ctx: Context, url: string): string | null {
  const u = URL.parse(url, ctx.http.base.href)
  return u !== null && ctx.http.sameOrigin(u) ? u.href : null
}

/** Why no sample has items enough: none answered the envelope (whose results are the items), or `few`. */
function fewItems (ctx: Context, few: string): string {
  return enveloped(ctx) === undefined ? 'no collection answered the envelope' : few
}

export const collectionRules: Rule[] = [
  {
    id: 'collections.envelope',
    section: ENVELOPE,
    title: 'a collection answers 200 with {results, paging}, never a bare array, also when empty',
    async run (ctx) {
      const refused = unauthorized(ctx)
      if (refused !== null) return refused
      if (ctx.samples.length === 0) return notApplicable('no collection to probe')
      // A collection the token may not read says nothing about its envelope.
      const readable = ctx.samples.filter(s => s.exchange.response.status !== 401 && s.exchange.response.status !== 403)
      if (readable.length === 0) return notChecked('the token may read none of the collections')
      for (const s of readable) {
        const fault = envelopeFault(s.exchange)
        if (fault !== null) return fail(`GET ${s.collection.path}: ${fault}`, s.exchange)
      }
      return pass()
    }
  },
  {
    id: 'collections.limit',
    section: COLLECTIONS,
    title: 'limit below 1 is a 400 INPUT_MIN_VALUE; 1 gives one item; above the maximum the maximum applies',
    async run (ctx) {
      const s = enveloped(ctx)
      if (s === undefined) return unauthorized(ctx) ?? notApplicable('no collection answered the envelope')
      const zero = await ctx.http.send({ path: `${s.collection.path}?limit=0` })
      const fault = statusFault(zero, 400)
      if (fault !== null) return fail(`limit=0: ${fault}`, zero)
      if (!contextOf(zero).some(c => c.code === 'INPUT_MIN_VALUE')) return fail('limit=0: no context item INPUT_MIN_VALUE', zero)
      const one = await ctx.http.send({ path: `${s.collection.path}?limit=1` })
      const page = pageOf(one)
      if (page === null || page.paging.limit !== 1 || page.items.length > 1) return fail('limit=1: expected a page of at most one item with paging.limit 1', one)
      const huge = await ctx.http.send({ path: `${s.collection.path}?limit=100000` })
      const big = pageOf(huge)
      if (huge.response.status === 400) return pass()
      if (big === null || typeof big.paging.limit !== 'number' || big.paging.limit >= 100000 || big.items.length > big.paging.limit) return fail('limit=100000: expected the API\'s maximum applied (paging.limit says it) or a 400', huge)
      return pass()
    }
  },
  {
    id: 'collections.cursor-paging',
    section: COLLECTIONS,
    title: 'cursor paging: next and previous links walk the pages without gaps or repeats',
    async run (ctx) {
      const s = sampleWith(ctx, 3)
      if (s === undefined) return unauthorized(ctx) ?? notApplicable(fewItems(ctx, 'no collection has 3 items or more on its first page'))
      const first = await ctx.http.send({ path: `${s.collection.path}?limit=2` })
      const firstPage = pageOf(first)
      if (firstPage === null) return fail('limit=2: no envelope', first)
      const pages = [firstPage]
      const next0 = firstPage.paging.next
      if (!isObject(next0) || typeof next0.cursor !== 'string' || typeof next0.url !== 'string') return fail('the first of several pages has no paging.next {cursor, url}', first)
      let second: Exchange | null = null
      let link: unknown = next0
      for (let n = 0; n < 3 && isObject(link) && typeof link.url === 'string'; n++) {
        const target = local(ctx, link.url)
        if (target === null) return fail(`paging.next.url points off the service: ${link.url}`, first)
        if (!/[?&]limit=2(&|$)/.test(target)) return fail('paging.next.url does not carry the limit', first)
        const ex = await ctx.http.send({ path: target })
        second ??= ex
        const page = pageOf(ex)
        if (page === null) return fail('the next page has no envelope', ex)
        pages.push(page)
        link = page.paging.next
      }
      const walked = pages.flatMap(p => ids(p.items))
      if (new Set(walked).size !== walked.length) return fail(`the pages repeat an item: ${walked.join(', ')}`, second ?? first)
      const whole = await ctx.http.send({ path: `${s.collection.path}?limit=${walked.length}` })
      const all = pageOf(whole)
      if (all === null || ids(all.items).join() !== walked.join()) return fail(`the pages (${walked.join(', ')}) are not the first ${walked.length} items of one page`, whole)
      const previous = pages[1]?.paging.previous
      if (second !== null) {
        if (!isObject(previous) || typeof previous.url !== 'string') return fail('the second page has no paging.previous {cursor, url}', second)
        const target = local(ctx, previous.url)
        if (target === null) return fail(`paging.previous.url points off the service: ${previous.url}`, second)
        const back = await ctx.http.send({ path: target })
        if (ids(pageOf(back)?.items ?? []).join() !== ids(firstPage.items).join()) return fail('paging.previous of the second page is not the first page', back)
      }
      return pass()
    }
  },
  {
    id: 'collections.offset-paging',
    section: COLLECTIONS,
    title: 'offset paging: offset and limit select the same items as the default order',
    async run (ctx) {
      const s = sampleWith(ctx, 3)
      if (s === undefined) return unauthorized(ctx) ?? notApplicable(fewItems(ctx, 'no collection has 3 items or more on its first page'))
      if (s.collection.offset === false) return notApplicable(`the document offers no offset parameter on ${s.collection.path}`)
      const ex = await ctx.http.send({ path: `${s.collection.path}?offset=1&limit=2` })
      if (s.collection.offset === null && ex.response.status === 400) return notApplicable(`${s.collection.path} refuses offset: offset paging not offered`)
      const page = pageOf(ex)
      if (page === null) return fail('offset=1&limit=2: no envelope', ex)
      if (page.paging.offset !== 1 || page.paging.limit !== 2) return fail('paging does not say offset 1 and limit 2', ex)
      const expected = ids(s.items).slice(1, 3)
      if (ids(page.items).join() !== expected.join()) return fail(`offset=1&limit=2 gave ${ids(page.items).join(', ')}, the default order has ${expected.join(', ')} there`, ex)
      return pass()
    }
  },
  {
    id: 'etags.item',
    section: 'Method rules',
    title: 'an item\'s ETag (equal to its etag property when there is one) gives 304 on If-None-Match',
    run: async (ctx) => await notModified(ctx, 'item')
  },
  {
    id: 'etags.collection',
    section: 'ETags with collections',
    title: 'a collection page\'s ETag gives 304 on If-None-Match',
    run: async (ctx) => await notModified(ctx, 'collection')
  }
]

async function notModified (ctx: Context, what: 'item' | 'collection'): Promise<Outcome> {
  const s: Sample | undefined = what === 'item' ? sampleWith(ctx, 1) : enveloped(ctx)
  if (s === undefined) return unauthorized(ctx) ?? notApplicable(fewItems(ctx, what === 'item' ? 'no collection has an item' : 'no collection answered the envelope'))
  const first = s.items[0]
  const path = what === 'item' && first !== undefined ? itemPath(s.collection, String(first.id)) : s.collection.path
  const got = what === 'item' ? await ctx.http.send({ path }) : s.exchange
  if (got.response.status !== 200) return fail(`GET ${path}: expected 200, got ${got.response.status}`, got)
  const etag = got.response.headers.etag
  if (etag === undefined) return notApplicable(`GET ${path} sends no ETag`)
  const property = (got.response.json as { etag?: unknown } | undefined)?.etag
  if (what === 'item' && property !== undefined && property !== etag) return fail(`the etag property ${JSON.stringify(property)} is not the ETag header`, got)
  const again = await ctx.http.send({ path, headers: { 'if-none-match': etag } })
  if (again.response.status !== 304) return fail(`If-None-Match with the ETag: expected 304, got ${again.response.status}`, again)
  if (again.response.text !== '') return fail('a 304 with a body', again)
  return pass()
}
