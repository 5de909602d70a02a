// Authentication: 401 with its titles and WWW-Authenticate, no-store on authenticated answers.
import { answering, fail, notApplicable, notChecked, pass, problemFault, statusFault, type Context, type Outcome } from '../context.js'
import type { Exchange } from '../types.js'
import type { Rule } from './rule.js'
import { noteCreated } from './writes.js'

const AUTH = 'Authentication'

/** What is wrong with a 401 refusal whose title should be one of `titles`, or null. */
function refusalFault (ex: Exchange, titles: readonly string[]): string | null {
  const status = statusFault(ex, 401)
  if (status !== null) return status
  if (ex.response.headers['www-authenticate'] === undefined) return 'a 401 without WWW-Authenticate'
  const title = (ex.response.json as { title?: unknown } | undefined)?.title
  return typeof title === 'string' && titles.includes(title) ? null : `the title is ${JSON.stringify(title)}, expected ${titles.map(t => `"${t}"`).join(' or ')}`
}

/** The path of a collection that needs a token, or why the rule does not apply. */
async function guarded (ctx: Context): Promise<string | Outcome> {
  const s = answering(ctx) ?? ctx.samples[0]
  if (s === undefined) return notApplicable('no collection to probe')
  if (s.exchange.response.status === 0) return notChecked(`GET ${s.collection.path} got no answer in time`)
  if (!ctx.hasToken && s.exchange.response.status !== 401) return notApplicable(`${s.collection.path} answers ${s.exchange.response.status} without a token`)
  if (ctx.hasToken) {
    // Answered with the token: whether it needs one is seen without it.
    const bare = await ctx.http.send({ path: s.collection.path, auth: false })
    if (bare.response.status >= 200 && bare.response.status < 300) return notApplicable(`${s.collection.path} answers ${bare.response.status} without a token`)
  }
  return s.collection.path
}

async function refused (ctx: Context, authorization: string | undefined, titles: readonly string[], what: string): Promise<Outcome> {
  const path = await guarded(ctx)
  if (typeof path !== 'string') return path
  const ex = await ctx.http.send({ path, auth: false, headers: authorization === undefined ? {} : { authorization } })
  const fault = refusalFault(ex, titles)
  return fault === null ? pass() : fail(`${what}: ${fault}`, ex)
}

/**
 * The limited token on each collection's GET: the first 403 is judged. With --writes, when it
 * reads every collection, a POST it may not make.
 */
async function forbidden (ctx: Context): Promise<Outcome> {
  if (!ctx.hasLimitedToken) return notChecked('needs --limited-token: a token the service accepts without a permission --token has')
  let refused: Exchange | undefined
  for (const c of ctx.model.collections) {
    const ex = await ctx.http.send({ path: c.path, auth: 'limited' })
    if (ex.response.status === 401) return fail('the limited token was refused as unauthenticated (401): 403 is for a caller the service knows', ex)
    if (ex.response.status === 403) { refused = ex; break }
  }
  if (refused === undefined && ctx.writes) {
    const c = ctx.model.collections.find(c => c.create !== null)
    if (c !== undefined) {
      // An empty body: a service that lets the limited token write refuses it as invalid (400), not
      // as forbidden, and creates nothing.
      const ex = await ctx.http.send({ method: 'POST', path: c.path, auth: 'limited', headers: { 'content-type': 'application/json' }, body: '{}', creates: true })
      // A collection that takes {}: the entity is the check's, removed with the others.
      noteCreated(ctx, c, ex)
      if (ex.response.status === 403) refused = ex
    }
  }
  if (refused === undefined) return notApplicable(`the limited token may ${ctx.writes ? 'read every collection and create' : 'read every collection (with --writes a POST is tried too)'}`)
  const fault = problemFault(refused, 403)
  if (fault !== null) return fail(fault, refused)
  const body = refused.response.json as { title?: unknown, detail?: unknown }
  if (body.title !== 'Forbidden') return fail(`the title is ${JSON.stringify(body.title)}, expected "Forbidden"`, refused)
  const path = refused.request.path.split('?')[0] ?? ''
  return typeof body.detail === 'string' && body.detail.includes(path) ? pass() : fail(`the detail ${JSON.stringify(body.detail ?? null)} does not name the path ${path}`, refused)
}

export const authRules: Rule[] = [
  {
    id: 'auth.missing',
    section: AUTH,
    title: 'no Authorization is a 401 (Unauthorized or Invalid Request) with WWW-Authenticate',
    run: async (ctx) => await refused(ctx, undefined, ['Unauthorized', 'Invalid Request'], 'without Authorization')
  },
  {
    id: 'auth.scheme',
    section: AUTH,
    title: 'a scheme other than exactly "Bearer" is a 401 Invalid Request',
    run: async (ctx) => await refused(ctx, 'Basic c3ZjLWNoZWNrOm5vdC1hLXBhc3N3b3Jk', ['Invalid Request', 'Unauthorized'], 'Authorization: Basic …')
  },
  {
    id: 'auth.invalid-token',
    section: AUTH,
    title: 'an invalid token is a 401 Invalid Token with WWW-Authenticate',
    run: async (ctx) => await refused(ctx, 'Bearer svc-conventions-check.not-a.token', ['Invalid Token', 'Unauthorized'], 'an invalid bearer token')
  },
  {
    id: 'auth.forbidden',
    section: AUTH,
    title: 'an authenticated caller without the permission gets 403 Forbidden, whose detail names the path',
    run: forbidden
  },
  {
    id: 'auth.no-store',
    section: AUTH,
    title: 'authenticated answers carry Cache-Control: no-store',
    observes: true,
    async run (ctx) {
      if (!ctx.hasToken) return notChecked('needs --token')
      // The collections' answers, which a token guards; a public document needs no no-store, and
      // OPTIONS carries no data (Method rules 12).
      const guarded = (path: string): boolean => ctx.model.collections.some(c => path.startsWith(ctx.http.prefix + c.path))
      const seen = ctx.http.exchanges.filter(e => e.request.headers.authorization === 'Bearer <token>' && e.request.method !== 'OPTIONS' && guarded(e.request.path) && e.response.status >= 200 && e.response.status < 300)
      if (seen.length === 0) return notApplicable('no authenticated request was answered with a 2xx')
      const bad = seen.find(e => !/\bno-store\b/i.test(e.response.headers['cache-control'] ?? ''))
      return bad === undefined ? pass() : fail(`Cache-Control is ${JSON.stringify(bad.response.headers['cache-control'] ?? null)}`, bad)
    }
  }
]
