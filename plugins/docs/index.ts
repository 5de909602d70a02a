import fp from 'fastify-plugin'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { refuseUnknownOptions, shownValue, type OptionKeys } from '../shared/options.js'
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

/** An operation as Swagger UI hands it to a sorter (an Immutable.js map). */
export interface SortedOperation { get: (key: 'path' | 'method') => string }

/**
 * Swagger UI's `operationsSorter`: within each tag, the resource operations by path and in
 * the order of their use (GET, POST, PUT, PATCH, DELETE), then HEAD and OPTIONS, which a
 * newcomer rarely needs. Serialized into the page by its source text, so it uses nothing
 * from outside its body.
 */
export function operationsSorter (a: SortedOperation, b: SortedOperation): number {
  const order = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options']
  const ia = order.indexOf(a.get('method'))
  const ib = order.indexOf(b.get('method'))
  // No inner function: a transpiler that keeps function names would call its helper in the page.
  return Number(ia >= 5) - Number(ib >= 5) || a.get('path').localeCompare(b.get('path')) || ia - ib
}

/** Swagger UI's `tagsSorter`: the resources' groups by name, the untagged operations (`default`: health, the document) last. */
export function tagsSorter (a: string, b: string): number {
  return Number(a === 'default') - Number(b === 'default') || a.localeCompare(b)
}

// Swagger UI's top bar shows a logo (@fastify/swagger-ui's Fastify one, or Swagger's with
// `logo: null`); the page is the service's, so it shows none, and its title names the document.
const NO_LOGO = { filename: 'svc-docs.css', content: '.swagger-ui .topbar .topbar-wrapper > a.link { display: none; }' }

/**
 * Serves the OpenAPI document of the openapi plugin (register that one first) in Swagger UI,
 * with its assets from the package itself: the page fetches nothing from elsewhere.
 */
async function docsPlugin (fastify: FastifyInstance, opts: DocsPluginOptions): Promise<void> {
  refuseUnknownOptions('docs', opts, OPTION_KEYS)
  const routePrefix = opts.routePrefix ?? defaults.routePrefix
  const title = opts.title ?? defaults.title
  if (typeof routePrefix !== 'string' || !/^\/[^?#]*[^/?#]$/.test(routePrefix)) throw new TypeError(`docs plugin: routePrefix must be a path without a trailing slash, got ${shownValue(routePrefix)}`)
  if (typeof title !== 'string' || title.length === 0) throw new TypeError(`docs plugin: title must be a non-empty string, got ${shownValue(title)}`)

  // The page reads the document the service serves (`/openapi.json`), not the copy
  // @fastify/swagger-ui serves at `<routePrefix>/json`, which only stands in when the openapi
  // plugin serves none. Through `urls`, @fastify/swagger-ui's documented way: it fixes `url`.
  const document = fastify.openapiDocument
  const url = document.path ?? `${fastify.prefix}${routePrefix}/json`

  // Loaded at registration only: importing the suite loads no Swagger UI.
  const { default: swaggerUi } = await import('@fastify/swagger-ui')
  // A child context: its onRoute hook reaches only the routes Swagger UI adds.
  await fastify.register(async function docsRoutes (child) {
    child.addHook('onRoute', publicRoute)
    await child.register(swaggerUi, {
      routePrefix,
      // The page at `<routePrefix>` (no trailing slash) names its assets by absolute paths, which
      // @fastify/swagger-ui writes without the context's route prefix unless told it ('' is none).
      indexPrefix: fastify.prefix,
      // No logo of its own either (its types omit null, which it reads as "none").
      logo: null as never,
      theme: { title, css: [NO_LOGO] },
      // No "valid" badge: that would ask validator.swagger.io about the document.
      validatorUrl: false,
      // Authorize once, and the token survives a reload of the page.
      // @fastify/swagger-ui types the sorter over strings; Swagger UI hands it operations.
      uiConfig: { urls: [{ url, name: document.title }], deepLinking: true, docExpansion: 'list', operationsSorter: operationsSorter as unknown as (a: string, b: string) => number, tagsSorter, persistAuthorization: true }
    })
  })
}

export default fp(needs('docs', ['openapi'], docsPlugin, { alsoBelow: true }), { fastify: '5.x', name: 'svc-docs' })
