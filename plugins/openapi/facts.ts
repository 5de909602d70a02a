import type { FastifyInstance, RouteOptions } from 'fastify'
import type { ConventionSettings as Settings, PublishedConventions } from '../conventions/index.js'
import { requestIdSettingsOf } from '../problem/index.js'
import { publishedBy } from '../shared/published.js'

/** The route config keys the document reads. */
export interface DocConfig {
  conventions?: unknown
  problems?: number[]
  collection?: unknown
  auth?: false | { scopes?: string[] }
  rateLimit?: unknown
  openapi?: { internal?: boolean, description?: string, headers?: Record<string, unknown>, responseHeaders?: Record<string, Record<string, unknown>>, body?: Record<string, unknown>, content?: Record<string, Record<string, unknown>>, optionalBody?: boolean, scopeAlternatives?: () => string[][], modificationDate?: boolean }
}

/**
 * What the suite's plugins do to one route, as far as its document shows: read from the
 * plugins registered on the app and their published settings, so the document follows the
 * same settings that make them send headers and answers.
 */
export interface RouteFacts {
  /** The route's methods, upper case. */
  methods: string[]
  config: DocConfig
  /** The conventions plugin's rules for the route; null without the plugin. */
  conventions: Settings | null
  /** The auth plugin checks a bearer token here. */
  authenticated: boolean
  /** The scopes the token must grant. */
  scopes: string[]
  /** The rate-limit plugin counts the route's requests. */
  rateLimited: boolean
  /** The header carrying the correlation id and the longest value honoured; null without the problem plugin, which echoes it. */
  requestId: { header: string, maxLength: number } | null
}

export function methodsOf (route: Pick<RouteOptions, 'method'>): string[] {
  return (Array.isArray(route.method) ? route.method : [route.method]).map(m => m.toUpperCase())
}

/** The problem plugin takes the caller's correlation id, on every route, and echoes it. */
function requestIdOf (fastify: FastifyInstance): RouteFacts['requestId'] {
  return fastify.hasPlugin('svc-problem') ? requestIdSettingsOf(fastify) : null
}

export function factsOf (fastify: FastifyInstance, route: RouteOptions): RouteFacts {
  const config = (route.config ?? {}) as DocConfig
  const methods = methodsOf(route)
  const published = publishedBy<PublishedConventions>(fastify, 'svc-conventions')
  const conventions = published?.routeSettings(config.conventions as never, `${methods.join(',')} ${route.url}`) ?? null
  const auth = config.auth
  return {
    methods,
    config,
    conventions,
    authenticated: fastify.hasPlugin('svc-auth') && auth !== false,
    scopes: auth === false ? [] : [...auth?.scopes ?? []],
    rateLimited: fastify.hasPlugin('svc-rate-limit') && config.rateLimit !== false,
    requestId: requestIdOf(fastify)
  }
}

/**
 * The facts of a request no route serves (OPTIONS, 405), answered by the methods plugin:
 * the conventions plugin's rules for the app; no token checked, nothing counted.
 */
export function unroutedFacts (fastify: FastifyInstance): RouteFacts {
  return {
    methods: ['OPTIONS'],
    config: {},
    conventions: publishedBy<PublishedConventions>(fastify, 'svc-conventions')?.routeSettings(undefined, 'OPTIONS') ?? null,
    authenticated: false,
    scopes: [],
    rateLimited: false,
    requestId: requestIdOf(fastify)
  }
}
