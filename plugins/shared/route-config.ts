import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from 'fastify'

/*
 * `request.routeOptions` builds a new object on every read (and asks the router about
 * constraint strategies), and several of the suite's hooks need the route's config on every
 * request: it is read once per request and kept on the request, under a decorator shared by
 * every plugin of the suite (a symbol, so it never meets a user's own decorator).
 */

const KEY = Symbol.for('svc-conventions.routeConfig')

type RouteConfig = FastifyContextConfig & { url?: string, method?: string }
type Holder = Record<typeof KEY, RouteConfig | null>

/** Declares the per-request slot; call from every plugin that uses routeConfigOf. */
export function useRouteConfig (fastify: FastifyInstance): void {
  if (!fastify.hasRequestDecorator(KEY)) fastify.decorateRequest(KEY, null)
}

/** The config of the route serving `request` (Fastify's, with `url` and `method`). */
export function routeConfigOf (request: FastifyRequest): RouteConfig {
  const holder = request as unknown as Holder
  let config = holder[KEY]
  if (config === null || config === undefined) {
    config = request.routeOptions.config as RouteConfig
    holder[KEY] = config
  }
  return config
}
