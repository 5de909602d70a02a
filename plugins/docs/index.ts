import fp from 'fastify-plugin'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { refuseUnknownOptions, type OptionKeys } from '../shared/options.js'
import { needs } from '../shared/dependencies.js'

export interface DocsPluginOptions {
  /** Path of the API docs page (Swagger UI, its assets, and the document at `<prefix>/json`). Default `/docs`. */
  routePrefix?: string
  /** Title of the browser tab. Default `API docs`. */
  title?: string
}

const defaults = {
  routePrefix: '/docs',
  title: 'API docs'
}
const OPTION_KEYS: OptionKeys<DocsPluginOptions> = { routePrefix: true, title: true }

/**
 * The docs routes answer browsers, not API clients: no token (the page is public like
 * `/openapi.json`, reference-service.md) and none of the convention's request rules
 * (a browser sends neither the User-Agent form nor `Accept: application/json`).
 */
function publicRoute (route: RouteOptions): void {
  route.config = { ...route.config, auth: false, conventions: false }
}

/**
 * Serves the OpenAPI document of the openapi plugin (register that one first) in Swagger UI,
 * with its assets from the package itself: the page fetches nothing from elsewhere.
 */
async function docsPlugin (fastify: FastifyInstance, opts: DocsPluginOptions): Promise<void> {
  refuseUnknownOptions('docs', opts, OPTION_KEYS)
  const routePrefix = opts.routePrefix ?? defaults.routePrefix
  const title = opts.title ?? defaults.title
  if (typeof routePrefix !== 'string' || !/^\/[^?#]*[^/?#]$/.test(routePrefix)) throw new TypeError(`docs plugin: routePrefix must be a path without a trailing slash, got ${String(routePrefix)}`)
  if (typeof title !== 'string' || title.length === 0) throw new TypeError(`docs plugin: title must be a non-empty string, got ${String(title)}`)

  // Loaded at registration only: importing the suite loads no Swagger UI.
  const { default: swaggerUi } = await import('@fastify/swagger-ui')
  // A child context: its onRoute hook reaches only the routes Swagger UI adds.
  await fastify.register(async function docsRoutes (child) {
    child.addHook('onRoute', publicRoute)
    await child.register(swaggerUi, {
      routePrefix,
      theme: { title },
      // No "valid" badge: that would ask validator.swagger.io about the document.
      validatorUrl: false,
      uiConfig: { deepLinking: true, docExpansion: 'list' }
    })
  })
}

export default fp(needs('docs', ['openapi'], docsPlugin), { fastify: '5.x', name: 'svc-docs' })
