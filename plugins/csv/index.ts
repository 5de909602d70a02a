import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions, preSerializationAsyncHookHandler } from 'fastify'
import type { ConventionsRouteConfig, PublishedConventions } from '../conventions/index.js'
import { negotiate, parseAccept } from '../shared/accept.js'
import { essenceOf, parseMediaType, type MediaType } from '../shared/media-type.js'
import { publishedBy } from '../shared/published.js'
import { refuseUnknownKeys, refuseUnknownOptions, type OptionKeys } from '../shared/options.js'
import { once } from '../shared/dependencies.js'
import { columnsOf, itemSchemaOf, type Column } from './columns.js'
import { linkHeader, resultsOf } from './page.js'
import { writeCsv } from './write.js'

/** Options of the `csv` plugin: collection pages as `text/csv` (RFC 4180) besides JSON. */
export interface CsvPluginOptions {
  /** Joins the elements of an array field in one CSV field. One character, not a comma, quote, CR or LF. Default `|`. */
  arraySeparator?: string
}

/**
 * `routeOptions.config.csv` of a GET collection route: `true` takes the columns from the
 * items of the 200 response schema (`results.items`), `{ item }` from the schema given.
 */
export type CsvRouteConfig = boolean | { item: unknown }

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's collection pages can also be sent as CSV (GET and HEAD only). */
    csv?: CsvRouteConfig
  }
  interface FastifyRequest {
    /**
     * The media type `Accept` chose (the conventions plugin's declaration, repeated: with this
     * plugin alone, nothing else declares it to an adopter's program); null without that plugin.
     */
    negotiatedType: string | null
  }
}

export const CSV_MEDIA_TYPE = 'text/csv'
/** RFC 4180 §3 gives text/csv its charset parameter; UTF-8, spelt as the reference contract writes it. */
export const CSV_CONTENT_TYPE = 'text/csv; charset=UTF-8'

const defaults = { arraySeparator: '|' }
const OPTION_KEYS: OptionKeys<CsvPluginOptions> = { arraySeparator: true }
const ROUTE_CONFIG = 'true, false or { item: <object schema> }'
const ROUTE_KEYS: OptionKeys<Exclude<CsvRouteConfig, boolean>> = { item: true }

// Without the conventions plugin (or with its Accept rule off) the plugin picks by itself,
// by the same rule: JSON whenever it is acceptable.
const OFFERED: MediaType[] = ['application/json', CSV_MEDIA_TYPE].map((t) => parseMediaType(t) as MediaType)

function checkSeparator (value: unknown): string {
  if (typeof value !== 'string' || value.length !== 1 || /[",\r\n]/.test(value)) {
    throw new TypeError(`csv plugin: arraySeparator must be one character other than a comma, a quote, CR or LF, got ${JSON.stringify(value)}`)
  }
  return value
}

/** The route's columns, or a TypeError naming the route when its config or schema gives none. */
function routeColumns (route: RouteOptions, where: string): Column[] {
  const config: unknown = route.config?.csv
  const explicit = typeof config === 'object' && config !== null
  if (!explicit && config !== true) throw new TypeError(`${where} must be ${ROUTE_CONFIG}, got ${JSON.stringify(config)}`)
  // Misspelt or guessed (a route's own arraySeparator), a key would be ignored unseen.
  if (explicit) refuseUnknownKeys(`${where}: `, config, ROUTE_KEYS, 'config.csv.')
  const item = explicit ? (config as { item?: unknown }).item : itemSchemaOf(route.schema?.response)
  if (item === null || item === undefined) throw new TypeError(`${where}: the route has no collection response schema (200 with results.items); give config.csv = { item: <object schema> }`)
  try {
    return columnsOf(item)
  } catch (err) {
    throw new TypeError(`${where}: ${(err as Error).message}`)
  }
}

/** The route's own `produces` with `text/csv` added, so the conventions plugin lets Accept pick it. */
function withCsvProduced (fastify: FastifyInstance, route: RouteOptions, where: string): void {
  const own = route.config?.conventions
  if (own === false) return
  const published = publishedBy<PublishedConventions>(fastify, 'svc-conventions')
  const produces = own?.produces ?? published?.routeSettings(undefined, where).accept?.produces.map(essenceOf)
  if (produces === undefined || produces.some((t) => essenceOf(parseMediaType(t) as MediaType) === CSV_MEDIA_TYPE)) return
  const conventions: ConventionsRouteConfig = { ...own, produces: [...produces, CSV_MEDIA_TYPE] }
  route.config = { ...route.config, conventions }
}

/** Appends `Accept` to `Vary` (RFC 9110 §12.5.5): the same URL answers JSON or CSV. */
function varyOnAccept (reply: FastifyReply): void {
  const current = reply.getHeader('vary')
  if (current === undefined || current === '') reply.header('vary', 'Accept')
  else if (!String(current).split(',').some((f) => f.trim().toLowerCase() === 'accept')) reply.header('vary', `${String(current)}, Accept`)
}

function chosenType (request: FastifyRequest): string | null {
  if (request.negotiatedType !== null) return request.negotiatedType
  const accept = request.headers.accept
  return accept === undefined || accept.trim() === '' ? null : negotiate(parseAccept(accept), OFFERED)
}

const asWritten = (payload: string): string => payload

async function csvPlugin (fastify: FastifyInstance, opts: CsvPluginOptions): Promise<void> {
  refuseUnknownOptions('csv', opts, OPTION_KEYS)
  const separator = opts.arraySeparator === undefined ? defaults.arraySeparator : checkSeparator(opts.arraySeparator)

  // The request decorator the conventions plugin declares, for a server without it.
  if (!fastify.hasRequestDecorator('negotiatedType')) fastify.decorateRequest('negotiatedType', null)

  fastify.addHook('onRoute', function (route) {
    const config: unknown = route.config?.csv
    if (config === undefined || config === false) return
    const methods = ([] as string[]).concat(route.method).map((m) => m.toUpperCase())
    // A POST search answers JSON: the reference contract offers CSV on GET.
    if (!methods.every((m) => m === 'GET' || m === 'HEAD')) return
    const where = `csv plugin: config.csv of ${methods.join(',')} ${route.url}`
    const columns = routeColumns(route, where)
    withCsvProduced(this, route, where)

    // Runs before the serializer: a page sent as CSV is written here and passed through as it is.
    const toCsv: preSerializationAsyncHookHandler = async function (request, reply, payload) {
      const results = resultsOf(payload)
      if (reply.statusCode !== 200 || results === null) return payload
      varyOnAccept(reply)
      if (chosenType(request) !== CSV_MEDIA_TYPE) return payload
      const link = linkHeader(payload)
      if (link !== null) reply.header('link', link)
      reply.type(CSV_CONTENT_TYPE).serializer(asWritten)
      return writeCsv(columns, results, separator)
    }
    const own = route.preSerialization
    route.preSerialization = [...(own === undefined ? [] : Array.isArray(own) ? own : [own]), toCsv]
  })
}

export type { Column } from './columns.js'
export { columnsOf } from './columns.js'
export { writeCsv } from './write.js'
export default fp(once('csv', csvPlugin), { fastify: '5.x', name: 'svc-csv' })
