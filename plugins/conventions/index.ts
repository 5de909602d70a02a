import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { ContextItem } from '../../schemas/problem.js'
import { invalidData } from '../problem/index.js'
import { publish } from '../shared/published.js'
import { matchedNoRoute } from '../shared/unmatched.js'
import { checkAccept } from './accept.js'
import { addJsonParsers, checkContentType, checkOptionsBody, useStrictJsonParser } from './content-type.js'
import { EXECUTION_CONTEXT_HEADER, applyExecutionContext } from './execution-context.js'
import { checkCustomHeaderName, declaredHeaderNames } from '../shared/header-names.js'
import { checkHttpVersion } from './http-version.js'
import { checkRepeatedHeaders } from './repeated-headers.js'
import { applyIdempotencyKey } from './idempotency-key.js'
import { OFF, defaults, resolveOptions, resolveRoute, type ConventionsOptions, type ConventionsRouteConfig, type Settings } from './options.js'
import { SERVICE_HEADER, applyServiceHeader, type CallingService } from './service-header.js'
import { checkUserAgent } from './user-agent.js'
import { needs } from '../shared/dependencies.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Per-route conventions: `false` switches every rule off, an object single rules. */
    conventions?: ConventionsRouteConfig | false
  }
  interface FastifyRequest {
    /** The `Svc-Execution-Context` sent, else the default (`prod`); always set. */
    executionContext: string
    /** The caller's parsed `Svc-Service`, or null when not sent. */
    callingService: CallingService | null
    /** The `Svc-Idempotency-Key` without quotes, or null when not sent. */
    idempotencyKey: string | null
    /** The media type chosen from Accept among the route's `produces`; null when not negotiated. */
    negotiatedType: string | null
  }
}

/** What the plugin publishes (shared/published.ts): the settings a route's `config.conventions` resolves to. */
export interface PublishedConventions {
  routeSettings: (config: ConventionsRouteConfig | false | undefined, route: string) => Settings
}

async function conventions (fastify: FastifyInstance, opts: ConventionsOptions): Promise<void> {
  const { settings: base, jsonTypes } = resolveOptions(opts)
  const fallbackContext = base.executionContext?.fallback ?? defaults.executionContext
  // Resolved once per route config object; a route's `conventions` object is shared by its contexts.
  const perRoute = new WeakMap<object, Settings>()

  function settingsOf (config: ConventionsRouteConfig | false | undefined, route: string): Settings {
    if (config === undefined) return base
    if (config === false) return OFF
    let s = perRoute.get(config)
    if (s === undefined) {
      s = resolveRoute(base, config, route)
      perRoute.set(config, s)
    }
    return s
  }

  function settingsFor (request: FastifyRequest): Settings {
    const config = request.routeOptions.config.conventions
    return config === undefined ? base : settingsOf(config, `${request.method} ${String(request.routeOptions.url)}`)
  }

  // The rules a route is held to, for the openapi plugin to document what they send and accept.
  publish(fastify, 'svc-conventions', { routeSettings: settingsOf } satisfies PublishedConventions)

  if (base.consumes !== null) useStrictJsonParser(fastify)
  addJsonParsers(fastify, jsonTypes)

  // Guarded: a context registered below another one with its own options inherits them.
  if (!fastify.hasRequestDecorator('executionContext')) {
    fastify.decorateRequest('executionContext', '')
    fastify.decorateRequest('callingService', null)
    fastify.decorateRequest('idempotencyKey', null)
  }
  // The csv plugin declares it too, for a server without this one: registered before, it is there.
  if (!fastify.hasRequestDecorator('negotiatedType')) fastify.decorateRequest('negotiatedType', null)

  // Registration-time checks: a bad route config or header name stops the boot, naming the route.
  fastify.addHook('onRoute', function (routeOptions) {
    const route = `${String(routeOptions.method)} ${routeOptions.url}`
    const s = settingsOf(routeOptions.config?.conventions, route)
    if (s.consumes !== null) addJsonParsers(this, s.consumes)
    if (s.headerNames === null) return
    for (const name of declaredHeaderNames(routeOptions.schema)) {
      const reason = checkCustomHeaderName(name, s.headerNames)
      if (reason !== null) throw new Error(`conventions plugin: route ${route} declares the header ${name}: ${reason} (conventions: Headers, Custom headers)`)
    }
  })

  // onRequest, so every refusal precedes body parsing, validation and authentication. The
  // checks run in the convention's order; the first refusal thrown wins, and the header
  // violations of 400 (Svc-Execution-Context, Svc-Service, Svc-Idempotency-Key) are reported
  // together, after the refusals that come before them.
  fastify.addHook('onRequest', async function conventionsHook (request, reply) {
    const s = settingsFor(request)
    // Set before any check, so refusals carry them too; a handler that sets its own value
    // replaces them.
    if (s.contentLanguage !== null) reply.header('content-language', s.contentLanguage)
    if (s.selfHeader !== null) reply.header(SERVICE_HEADER, s.selfHeader)
    request.executionContext = fallbackContext
    const headers = request.headers
    // Read first, so that every refusal below echoes an accepted context too.
    const contextItem = s.executionContext === null ? null : applyExecutionContext(request, headers, reply, s.executionContext)
    // Host, missing or repeated, is refused on every route: HTTP/1.1 itself requires one.
    checkHttpVersion(request, headers.host, s.httpVersion)
    const userAgentRepeated = checkRepeatedHeaders(request, s.httpVersion)
    if (s.userAgent !== null) await checkUserAgent(request, headers['user-agent'], s.userAgent, userAgentRepeated)
    // No route of the path serves it: no media types of its own, so nothing is negotiated.
    if (!matchedNoRoute(request)) {
      if (s.accept !== null) request.negotiatedType = checkAccept(request, headers.accept, s.accept)
      if (s.consumes !== null) checkContentType(request, headers, s.consumes)
    } else if (s.consumes !== null) {
      checkOptionsBody(request, headers)
    }
    const items: ContextItem[] = contextItem === null ? [] : [contextItem]
    if (s.serviceHeader !== null) items.push(...await applyServiceHeader(request, headers, s.serviceHeader.registry))
    if (s.idempotencyKey) {
      const item = applyIdempotencyKey(request, headers)
      if (item !== null) items.push(item)
    }
    if (items.length > 0) throw invalidData(items)
  })

  // A refusal by a hook that ran before this plugin's (the problem plugin's X-Request-ID check,
  // an application's own) carries what every answer carries too; on errors only, so the
  // answers this plugin's hook saw pay nothing for it.
  fastify.addHook('onError', async function conventionsOnError (request, reply) {
    const s = settingsFor(request)
    if (s.contentLanguage !== null && !reply.hasHeader('content-language')) reply.header('content-language', s.contentLanguage)
    if (s.selfHeader !== null && !reply.hasHeader(SERVICE_HEADER)) reply.header(SERVICE_HEADER, s.selfHeader)
    const context = request.headers[EXECUTION_CONTEXT_HEADER]
    if (s.executionContext !== null && typeof context === 'string' && !reply.hasHeader(EXECUTION_CONTEXT_HEADER)) reply.header(EXECUTION_CONTEXT_HEADER, context)
  })
}

export type { ConventionsOptions, ConventionsRouteConfig, Settings as ConventionSettings } from './options.js'
export type { UserAgentOptions } from './user-agent.js'
export type { UserAgent } from '../shared/user-agent.js'
export type { ExecutionContextOptions } from './execution-context.js'
export type { ServiceHeaderOptions, CallingService } from './service-header.js'
export type { ServiceDescription, ServiceHeaderResult } from '../shared/service-header.js'
export type { MediaRange } from '../shared/accept.js'
export type { MediaType } from '../shared/media-type.js'
export { parseAccept, negotiate, qualityOf } from '../shared/accept.js'
export { parseMediaType, essenceOf } from '../shared/media-type.js'
export { parseUserAgent, isValidUserAgent } from '../shared/user-agent.js'
export { parseServiceHeader, formatServiceHeader } from '../shared/service-header.js'
export { parseIdempotencyKey } from './idempotency-key.js'
export { checkCustomHeaderName, declaredHeaderNames, STANDARD_HEADERS } from '../shared/header-names.js'
export { httpVersionNotSupported } from './http-version.js'
// Its refusals are problems: the problem plugin renders them.
export default fp(needs('conventions', ['problem'], conventions), { fastify: '5.x', name: 'svc-conventions' })
