import fp from 'fastify-plugin'
import FindMyWay, { type HTTPMethod } from 'find-my-way'
import type { FastifyInstance } from 'fastify'
import { problems } from '../problem/errors.js'
import { matchedNoRoute } from '../shared/unmatched.js'
import { pathOf } from '../shared/url.js'

export interface MethodsPluginOptions {
  /** Answer OPTIONS on every known path with 204 and `Allow`. Default true. */
  options?: boolean
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Methods served at a concrete path (with OPTIONS), or null when no route matches it. */
    allowedMethods: (path: string) => string[] | null
  }
}

// The order in which `Allow` lists methods (RFC 9110 does not fix one; this reads well).
const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']
const rank = (m: string): number => { const i = ORDER.indexOf(m); return i === -1 ? ORDER.length : i }

/**
 * Method semantics of the convention: Fastify answers 404 for a known path with a method it
 * lacks (fastify#917), so the routes are mirrored into a second router keyed by path only,
 * and a request that matched no route is looked up there: OPTIONS gets 204 with `Allow`,
 * any other method 405 with `Allow`, and only a truly unknown path stays a 404.
 */
async function methodsPlugin (fastify: FastifyInstance, opts: MethodsPluginOptions): Promise<void> {
  const answerOptions = opts.options ?? true
  if (typeof answerOptions !== 'boolean') throw new TypeError(`methods plugin: options must be a boolean, got ${String(answerOptions)}`)

  // Each method's routes under their own method: a path's methods may come from several
  // patterns (`POST /things/search` and `GET /things/:id` both serve `/things/search`).
  const router = FindMyWay({ ignoreTrailingSlash: false, ignoreDuplicateSlashes: false })
  const registered = new Set<string>()
  const knownMethods = new Set<string>()

  fastify.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    // A catch-all OPTIONS route (as some CORS plugins add) says nothing about which paths exist.
    if (route.url === '*' || route.url === '/*') return
    for (const m of methods) {
      const method = m.toUpperCase()
      for (const each of method === 'GET' ? ['GET', 'HEAD'] : [method]) {
        if (registered.has(`${each} ${route.url}`)) continue
        registered.add(`${each} ${route.url}`)
        knownMethods.add(each)
        router.on(each as HTTPMethod, route.url, () => {})
      }
    }
  })

  function allowedMethods (path: string): string[] | null {
    const allowed = [...knownMethods].filter((m) => router.find(m as HTTPMethod, path) !== null)
    if (allowed.length === 0) return null
    if (!allowed.includes('OPTIONS')) allowed.push('OPTIONS')
    return allowed.sort((a, b) => rank(a) - rank(b))
  }
  fastify.decorate('allowedMethods', allowedMethods)

  fastify.addHook('onRequest', function methodsHook (request, reply, done) {
    if (!matchedNoRoute(request)) return done()
    const path = pathOf(request.url)
    const allowed = allowedMethods(path)
    if (allowed === null) return done()
    const allow = allowed.join(', ')
    if (request.method === 'OPTIONS' && answerOptions) {
      // Answered: the hook chain stops here, without done().
      reply.code(204).header('allow', allow).send()
      return
    }
    throw problems.methodNotAllowed(`The method ${request.method} is not supported at ${path}; use one of ${allow}.`, {
      headers: { allow },
      instance: path
    })
  })
}

export default fp(methodsPlugin, { fastify: '5.x', name: 'svc-methods' })
