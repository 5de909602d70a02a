// CORS: preflights refused with 403 and Svc-Cors-Error, accepted ones with explicit lists
// (conventions: Headers, Access-Control-* and Svc-Cors-Error).
import { answering, fail, notApplicable, pass, statusFault } from '../context.js'
import type { Rule } from './rule.js'

const CORS = 'Headers (CORS)'
const CORS_ERRORS = ['bad origin', 'bad method', 'bad header']

export const corsRules: Rule[] = [
  {
    id: 'cors.refused',
    section: CORS,
    title: 'a refused preflight is a 403 with Svc-Cors-Error (bad origin, bad method or bad header)',
    async run (ctx) {
      const c = answering(ctx)?.collection ?? ctx.model.collections[0]
      if (c === undefined) return notApplicable('no collection to probe')
      const ex = await ctx.http.send({ method: 'OPTIONS', path: c.path, auth: false, headers: { origin: 'https://svc-conventions-check.invalid', 'access-control-request-method': 'GET' } })
      const fault = statusFault(ex, 403)
      if (fault !== null) return fail(`a preflight from an origin no service allows: ${fault}`, ex)
      const reason = ex.response.headers['svc-cors-error']
      return reason !== undefined && CORS_ERRORS.includes(reason) ? pass() : fail(`Svc-Cors-Error is ${JSON.stringify(reason ?? null)}`, ex)
    }
  },
  {
    id: 'cors.allowed',
    section: CORS,
    title: 'an allowed preflight names the origin (never *), explicit methods, Max-Age at most 7200',
    async run (ctx) {
      if (ctx.origin === undefined) return notApplicable('no --origin given: an origin the service allows')
      const c = answering(ctx)?.collection ?? ctx.model.collections[0]
      if (c === undefined) return notApplicable('no collection to probe')
      const ex = await ctx.http.send({ method: 'OPTIONS', path: c.path, auth: false, headers: { origin: ctx.origin, 'access-control-request-method': 'GET' } })
      const h = ex.response.headers
      if (ex.response.status < 200 || ex.response.status > 299) return fail(`a preflight from ${ctx.origin}: expected a 2xx, got ${ex.response.status}`, ex)
      if (h['access-control-allow-origin'] !== ctx.origin) return fail('Access-Control-Allow-Origin is not the origin', ex)
      if (h['access-control-allow-methods'] === undefined || h['access-control-allow-methods'].includes('*')) return fail('Access-Control-Allow-Methods is missing or *', ex)
      if (h['access-control-max-age'] !== undefined && Number(h['access-control-max-age']) > 7200) return fail('Access-Control-Max-Age above 7200', ex)
      return pass()
    }
  },
  {
    id: 'cors.headers',
    section: CORS,
    title: 'no Access-Control-* answer uses *, credentials never with a wildcard origin',
    observes: true,
    async run (ctx) {
      const seen = ctx.http.exchanges.filter(e => Object.keys(e.response.headers).some(h => h.startsWith('access-control-')))
      if (seen.length === 0) return notApplicable('no answer carried Access-Control-* headers')
      const bad = seen.find(e => ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-expose-headers']
        .some(h => (e.response.headers[h] ?? '').split(',').map(v => v.trim()).includes('*')) || Number(e.response.headers['access-control-max-age'] ?? 0) > 7200)
      return bad === undefined ? pass() : fail('an Access-Control-* header is * (or Max-Age above 7200)', bad)
    }
  }
]
