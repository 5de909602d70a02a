import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify'

// Marks the cors plugin sets on the routes of its context (an onRoute hook): a plugin registered
// above it, at the root say, sees that a preflight is the cors plugin's to answer even where
// `hasPlugin('svc-cors')` is false there, as with cors in sibling contexts under prefixes.
const SERVED_BY_CORS = Symbol('svc-cors: the route\'s preflights are answered by the cors plugin')
const CATCH_ALL = Symbol('svc-cors: the library\'s OPTIONS route for every path')

/** The cors plugin's onRoute hook: marks each route of its context, and the library's catch-all. */
export function markCorsRoute (route: RouteOptions & { routePath?: string }): void {
  const catchAll = route.method === 'OPTIONS' && route.routePath === '*'
  const marks: Record<symbol, true> = catchAll ? { [SERVED_BY_CORS]: true, [CATCH_ALL]: true } : { [SERVED_BY_CORS]: true }
  route.config = Object.assign({}, route.config, marks)
}

function marked (request: FastifyRequest, mark: symbol): boolean {
  return (request.routeOptions.config as unknown as Record<symbol, unknown>)[mark] === true
}

/**
 * Whether no route of the request's path serves it: Fastify's 404, or the catch-all
 * `OPTIONS *` route a CORS plugin adds (@fastify/cors does, under each prefix it is registered
 * at), which says nothing about the path. Such a request has nothing to protect or negotiate; the
 * methods plugin answers it.
 */
export function matchedNoRoute (request: FastifyRequest): boolean {
  return request.is404 || (request.method === 'OPTIONS' && (request.routeOptions.url === '*' || marked(request, CATCH_ALL)))
}

/** A CORS preflight: OPTIONS with `Origin` and `Access-Control-Request-Method` (Fetch, §3.2.2). */
export function isPreflight (request: FastifyRequest): boolean {
  return request.method === 'OPTIONS' && request.headers.origin !== undefined && request.headers['access-control-request-method'] !== undefined
}

/**
 * A preflight the cors plugin answers or refuses: one in a context that has the plugin (`fastify`,
 * the asking plugin's), or to a route it marked. It carries no credentials and reaches no handler.
 * The method is looked at first: every other request costs one comparison.
 */
export function preflightForCors (request: FastifyRequest, fastify: FastifyInstance): boolean {
  return isPreflight(request) && (fastify.hasPlugin('svc-cors') || marked(request, SERVED_BY_CORS))
}
