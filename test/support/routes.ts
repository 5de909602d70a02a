import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type { FastifyInstance, RouteOptions } from 'fastify'

/** One route as Fastify registered it: the full URL (prefix included) and its method. */
export interface RegisteredRoute {
  method: string
  url: string
}

/**
 * Records every route of the Fastify instances created while `build` runs, through the
 * `fastify.initialization` diagnostics channel: the onRoute hook is in place before the first
 * plugin registers, so routes of every context are seen, including those that third-party
 * plugins (Swagger UI, its static assets) add. Nothing is changed in how the app is built.
 */
export async function withRoutes<T extends FastifyInstance> (build: () => Promise<T>): Promise<{ app: T, routes: RegisteredRoute[] }> {
  const routes: RegisteredRoute[] = []
  const onInit = (message: unknown): void => {
    const { fastify } = message as { fastify: FastifyInstance }
    fastify.addHook('onRoute', (route: RouteOptions) => {
      for (const method of ([] as string[]).concat(route.method)) routes.push({ method: method.toUpperCase(), url: route.url })
    })
  }
  subscribe('fastify.initialization', onInit)
  try {
    const app = await build()
    await app.ready()
    return { app, routes }
  } finally {
    unsubscribe('fastify.initialization', onInit)
  }
}
