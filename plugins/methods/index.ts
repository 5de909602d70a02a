import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest, HTTPMethods } from 'fastify'
import { methodNotAllowedProblem } from '../problem/internal.js'
import { refuseUnknownOptions, shownValue, type OptionKeys } from '../shared/options.js'
import { matchedNoRoute, preflightForCors } from '../shared/unmatched.js'
import { pathOf } from '../shared/url.js'
import { needs } from '../shared/dependencies.js'

export interface MethodsPluginOptions {
  /** Answer OPTIONS on every known path with 204 and `Allow`. Default true. */
  options?: boolean
}

/** A request's values for Fastify's built-in route constraints, as its router derives them. */
export interface RequestConstraints {
  /** The `Host` header (`:authority` in HTTP/2). */
  host?: string | undefined
  /** The `Accept-Version` header. */
  version?: string | undefined
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Methods served at a concrete path (with OPTIONS), or null when no route matches it; with
     * `constraints`, routes constrained by host or version count where those values match.
     */
    allowedMethods: (path: string, constraints?: RequestConstraints) => string[] | null
  }
}

const OPTION_KEYS: OptionKeys<MethodsPluginOptions> = { options: true }

// The order in which `Allow` lists methods (RFC 9110 does not fix one; this reads well).
const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']
const rank = (m: string): number => { const i = ORDER.indexOf(m); return i === -1 ? ORDER.length : i }

/**
 * Whether a match is a catch-all route's (`*` or `/*`, as a CORS plugin adds for OPTIONS): its
 * wildcard took the whole path, which says nothing about which paths exist.
 */
function catchAll (params: Record<string, string | undefined>, path: string): boolean {
  const rest = params['*']
  if (rest === undefined) return false
  if (rest === path || rest === path.slice(1)) return true
  if (!path.includes('%')) return false
  // The router gives its parameters percent-decoded, and matches no path it cannot decode.
  let decoded: string
  try {
    decoded = decodeURIComponent(path)
  /* c8 ignore next 3 */
  } catch {
    return false
  }
  return rest === decoded || rest === decoded.slice(1)
}

/** What the router derives from a request for the `host` and `version` constraints (find-my-way's strategies). */
function constraintsOf (request: FastifyRequest): RequestConstraints {
  // Node gives each header as one string (a repeated one joined) or not at all; HTTP/2 has `:authority`, not `Host`.
  const headers = request.headers as Record<string, string | undefined>
  return { host: headers.host ?? headers[':authority'], version: headers['accept-version'] }
}

/** A CORS preflight (Fetch §3.2.2): OPTIONS with an Origin and the method the page will use. */
/**
 * How many characters of a path a match took from its parameters. The router prefers a fixed
 * segment to a parameter within one method; across methods a path belongs alike to the routes
 * that take the most of it literally, so `POST /v1/things/search` owns that path and
 * `GET /v1/things/:id` does not serve the id `search` there (405, not its 404).
 */
function parameterLength (params: Record<string, string | undefined>): number {
  let taken = 0
  // A match's parameters are strings (an optional one that is absent has no key).
  for (const key in params) taken += (params[key] as string).length
  return taken
}

/**
 * Method semantics of the convention: Fastify answers 404 for a known path with a method it
 * lacks (fastify#917), so a request that matched no route is looked up again in the app's own
 * router (`findRoute`) under every method it serves: OPTIONS gets 204 with `Allow`, any other
 * method 405 with `Allow`, and only a truly unknown path stays a 404. A path that a route of one
 * method takes literally is not served by another method's parametric route (parameterLength).
 * The app's router, not a copy of it, so its options hold alike (`ignoreTrailingSlash`,
 * `caseSensitive`, duplicate slashes, constraints, HEAD routes or none), whether set in
 * `routerOptions` or at the top.
 */
async function methodsPlugin (fastify: FastifyInstance, opts: MethodsPluginOptions): Promise<void> {
  refuseUnknownOptions('methods', opts, OPTION_KEYS)
  const answerOptions = opts.options ?? true
  if (typeof answerOptions !== 'boolean') throw new TypeError(`methods plugin: options must be a boolean, got ${shownValue(answerOptions)}`)

  /**
   * The route that serves a path under a method for these constraints, as the router would find
   * it. A host that no route is constrained to matches the unconstrained routes (find-my-way's
   * host strategy), but a version does not, even where no route is versioned and the router
   * ignores it: a version that finds nothing is looked up again without it.
   */
  function find (method: string, path: string, { host, version }: RequestConstraints): ReturnType<FastifyInstance['findRoute']> {
    const constraints = host === undefined ? undefined : { host }
    const versioned = version === undefined ? null : fastify.findRoute({ method: method as HTTPMethods, url: path, constraints: { ...constraints, version } })
    return versioned ?? fastify.findRoute({ method: method as HTTPMethods, url: path, constraints })
  }

  /**
   * The routes that match a path under each method (a catch-all's aside), with how much of it
   * each took from parameters. Without constraints, a route constrained by host or version is not found.
   */
  function matches (path: string, constraints: RequestConstraints): Array<{ method: string, taken: number }> {
    const found: Array<{ method: string, taken: number }> = []
    for (const method of fastify.supportedMethods) {
      const match = find(method, path, constraints)
      if (match !== null && !catchAll(match.params, path)) found.push({ method, taken: parameterLength(match.params) })
    }
    return found
  }

  function allowedMethods (path: string, constraints: RequestConstraints = {}): string[] | null {
    const found = matches(path, constraints)
    if (found.length === 0) return null
    // The path belongs to the routes that take most of it literally (parameterLength).
    const least = Math.min(...found.map(m => m.taken))
    const allowed = found.filter(m => m.taken === least).map(m => m.method)
    if (!allowed.includes('OPTIONS')) allowed.push('OPTIONS')
    return allowed.sort((a, b) => rank(a) - rank(b))
  }
  fastify.decorate('allowedMethods', allowedMethods)

  // What the routes name literally, so that a parametric match looks no further unless a
  // parameter took one of those names (`GET <collection>/search`): the lookups of `matches` under
  // every method are the plugin's largest cost on an item request. Routes registered from here on
  // are seen whole (onRoute); those registered before, through the router's own listing.
  const literals = new Set<string>()
  const seen = new Set<string>()
  let mixed = false
  function learn (url: string): void {
    for (const segment of url.split('/')) {
      if (!segment.includes(':') && !segment.includes('*')) literals.add(segment.toLowerCase())
      // A segment that mixes text and parameters (`:name.:ext`) hides its text from a split by '/'.
      else if (!/^(?::\w+(?:\(.*\))?|\*)$/.test(segment)) mixed = true
    }
  }
  fastify.addHook('onRoute', (route) => {
    learn(route.url)
    seen.add(route.url)
  })
  fastify.addHook('onReady', async function learnEarlierRoutes () {
    // Lines such as `│   ├── /search (POST)`: the tree's drawing and the methods stripped.
    for (const line of fastify.printRoutes({ commonPrefix: false }).split('\n')) {
      learn(line.replace(/^[\s│├└─]+/, '').replace(/ \([A-Z, -]+\)$/, ''))
    }
  })

  /** Whether a parameter of the matched route took a name that some route takes literally. */
  function mayBeShadowed (pattern: string, params: Record<string, string>): boolean {
    // A route registered before the plugin (its names unknown), or a mixed segment: look it up.
    if (mixed || !seen.has(pattern)) return true
    for (const key in params) {
      for (const part of (params[key] as string).split('/')) if (literals.has(part.toLowerCase())) return true
    }
    return false
  }

  fastify.addHook('onRequest', async function methodsHook (request, reply) {
    // A CORS preflight is the cors plugin's to answer (its Access-Control-* headers, or a 403
    // with Svc-Cors-Error), whichever of the two was registered first, or in a context below
    // this one: its hook may come later.
    if (preflightForCors(request, fastify)) return
    const path = pathOf(request.url)
    if (!matchedNoRoute(request)) {
      // A matched route serves the request unless another method's route takes more of the path
      // literally (parameterLength): the id route does not serve `GET <collection>/search`.
      const params = request.params as Record<string, string>
      const taken = parameterLength(params)
      if (taken === 0 || !mayBeShadowed(request.routeOptions.url as string, params) || !matches(path, constraintsOf(request)).some(m => m.taken < taken)) return
    }
    // Routes constrained by host or version (route `constraints`) count where the request matches them.
    const allowed = allowedMethods(path, constraintsOf(request))
    if (allowed === null) return
    // Answered: the hooks after this one do not run. Method rules 12: not for caches to keep.
    if (request.method === 'OPTIONS' && answerOptions) return reply.code(204).header('allow', allowed.join(', ')).header('cache-control', 'no-store').send()
    throw methodNotAllowedProblem(request.method, path, allowed)
  })
}

// Its refusals are problems: the problem plugin renders them.
export default fp(needs('methods', ['problem'], methodsPlugin), { fastify: '5.x', name: 'svc-methods' })
