// Method rules read without changing anything: 404, 405 with Allow, OPTIONS, HEAD, no
// redirects, and HTTP/1.0 refused (conventions: Method rules, HTTP methods, Versioning).
import { answering, fail, itemPath, missingId, notApplicable, pass, refusedCredentials, statusFault } from '../context.js'
import type { Collection } from '../openapi.js'
import type { Rule } from './rule.js'
import { noteCreated } from './writes.js'

const METHODS = 'Method rules'

export const methodRules: Rule[] = [
  {
    id: 'versioning.http-1.0',
    section: 'Versioning',
    title: 'a request in HTTP/1.0 is refused (4xx or 505), never served',
    async run (ctx) {
      const path = answering(ctx)?.collection.path ?? ctx.model.collections[0]?.path ?? '/'
      const ex = await ctx.http.sendHttp10(path)
      const status = ex.response.status
      if (status === 0) return fail('no HTTP answer to an HTTP/1.0 request', ex)
      return (status >= 400 && status < 500) || status === 505 ? pass() : fail(`an HTTP/1.0 request was answered ${status}`, ex)
    }
  },
  {
    id: 'methods.not-found',
    section: METHODS,
    title: 'GET of an unknown id, or of an unknown path, is a 404',
    async run (ctx) {
      const c = answering(ctx)?.collection ?? ctx.model.collections[0]
      const paths = [`/svc-conventions-check-${missingId()}`, ...(c === undefined ? [] : [itemPath(c, missingId())])]
      for (const path of paths) {
        const ex = await ctx.http.send({ path })
        const refused = refusedCredentials(ctx, ex, 'read')
        if (refused !== null) return refused
        const fault = statusFault(ex, 404)
        if (fault !== null) return fail(`GET ${path}: ${fault}`, ex)
      }
      return pass()
    }
  },
  {
    id: 'methods.not-allowed',
    section: METHODS,
    title: 'a method the path does not serve is a 405 with Allow',
    async run (ctx) {
      // GET changes nothing even where it is served: it is the probe when the document names a
      // path without one. Otherwise a POST of nothing to an item that does not exist.
      const plain = ctx.model.pathsWithoutGet.find(p => !p.startsWith('/_'))
      const c = answering(ctx)?.collection ?? ctx.model.collections[0]
      const probe = plain !== undefined
        ? { method: 'GET', path: plain }
        : c !== undefined && ctx.model.documentSource === null
          ? { method: 'POST', path: itemPath(c, missingId()), headers: { 'content-type': 'application/json' }, body: '{}' }
          : undefined
      if (probe === undefined) return notApplicable('the document names no path without GET')
      const ex = await ctx.http.send(probe)
      if (probe.method === 'POST') noteCreated(ctx, c as Collection, ex)
      const fault = statusFault(ex, 405)
      if (fault !== null) return fail(`${probe.method} ${probe.path}: ${fault}`, ex)
      const allow = ex.response.headers.allow
      if (allow === undefined || allow === '') return fail('a 405 without Allow', ex)
      if (allow.split(',').map(m => m.trim().toUpperCase()).includes(probe.method)) return fail(`Allow lists ${probe.method}, which was refused`, ex)
      return pass()
    }
  },
  {
    id: 'methods.options',
    section: METHODS,
    title: 'OPTIONS answers 200 or 204 with Allow and no body',
    async run (ctx) {
      const c = answering(ctx)?.collection ?? ctx.model.collections[0]
      if (c === undefined) return notApplicable('no collection to probe')
      const ex = await ctx.http.send({ method: 'OPTIONS', path: c.path })
      const fault = statusFault(ex, [200, 204])
      if (fault !== null) return fail(fault, ex)
      const allow = (ex.response.headers.allow ?? '').split(',').map(m => m.trim().toUpperCase())
      if (!allow.includes('GET')) return fail('Allow does not list GET', ex)
      if (ex.response.text !== '') return fail('OPTIONS answered with a body', ex)
      return pass()
    }
  },
  {
    id: 'methods.head',
    section: METHODS,
    title: 'HEAD answers the status GET would, without a body',
    async run (ctx) {
      const s = answering(ctx)
      if (s === undefined) return notApplicable('no collection answered a GET')
      const paths: Array<[string, number]> = [[s.collection.path, s.exchange.response.status], [itemPath(s.collection, missingId()), 404]]
      const item = s.items[0]
      if (item !== undefined && typeof item.id === 'string') paths.push([itemPath(s.collection, item.id), 200])
      for (const [path, status] of paths) {
        const ex = await ctx.http.send({ method: 'HEAD', path })
        const fault = statusFault(ex, status)
        if (fault !== null) return fail(`HEAD ${path}: ${fault} (as GET would)`, ex)
        if (ex.response.text !== '') return fail('HEAD answered with a body', ex)
      }
      return pass()
    }
  },
  {
    id: 'methods.no-redirects',
    section: METHODS,
    title: 'no 3xx answers (304 to a conditional GET aside)',
    observes: true,
    async run (ctx) {
      const ex = ctx.http.exchanges.find(e => e.response.status >= 300 && e.response.status < 400 && e.response.status !== 304)
      return ex === undefined ? pass() : fail(`a ${ex.response.status} (redirects are not followed off the base URL's host)`, ex)
    }
  }
]
