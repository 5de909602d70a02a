import type { IncomingHttpHeaders } from 'node:http'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { problems } from '../problem/index.js'
import { essenceOf, isUtf8, paramOf, parseMediaType, repeatedParam, type MediaType, type MediaTypes } from '../shared/media-type.js'
import { shown } from './shown.js'
import { pathOf } from '../shared/url.js'
import { strictJsonParser } from '../problem/internal.js'
import { withArticle } from '../shared/article.js'

/** The media types a route accepts in request bodies. */
export type Consumes = MediaTypes

/** RFC 9112 §6.3: a request has content when it declares a length above 0 or is transfer-coded. */
const BODYLESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS'])

function hasBody (headers: IncomingHttpHeaders): boolean {
  if (headers['transfer-encoding'] !== undefined) return true
  return Number(headers['content-length']) > 0
}

/**
 * RFC 9112 §6.1: `chunked` is the one transfer coding Node decodes. Another coding before it
 * (`gzip, chunked`) would reach the body parser still coded, and be refused as text that is not UTF-8.
 */
function otherTransferCoding (headers: IncomingHttpHeaders): string | undefined {
  const te = headers['transfer-encoding']
  if (te === undefined) return undefined
  return te.split(',').map(c => c.trim().toLowerCase()).find(c => c !== 'chunked')
}

/**
 * Conventions: Headers, Content-Type — required with a body, only the route's types, and
 * only UTF-8, each parameter given once. Refuses with 415 before the body is read; a bodiless request is not checked.
 */
export function checkContentType (request: FastifyRequest, headers: IncomingHttpHeaders, allowed: Consumes): void {
  if (!hasBody(headers)) return
  refuseBody(request)
  const path = pathOf(request.url)
  const coding = otherTransferCoding(headers)
  if (coding !== undefined) {
    throw problems.badRequest(`The request's Transfer-Encoding ${shown(headers['transfer-encoding'] as string)} applies the coding ${shown(coding)}, which the service does not decode; send the body with Transfer-Encoding: chunked alone, or with a Content-Length.`, { instance: path })
  }
  const accepted = allowed.map(essenceOf)
  const fix = `send the body as ${accepted.join(' or ')}`
  const header = headers['content-type']
  const target = `${request.method} ${path}`
  // RFC 5789 §2.2: a PATCH refused for its document's type names the types the resource takes.
  const advertised = request.method === 'PATCH' ? { 'accept-patch': accepted.join(', ') } : undefined
  const refuse = (detail: string): Error => problems.unsupportedMediaType(detail, { instance: path, headers: advertised })
  if (header === undefined) {
    throw refuse(`The request to ${target} has a body but no Content-Type header; ${fix}.`)
  }
  const mt = parseMediaType(header)
  if (mt === null) {
    throw refuse(`The Content-Type ${shown(header)} is not a valid media type; ${fix}.`)
  }
  if (!accepted.includes(essenceOf(mt))) {
    throw refuse(`The Content-Type ${shown(header)} is not accepted by ${target}; ${fix}.`)
  }
  const repeated = repeatedParam(mt)
  if (repeated !== undefined) {
    throw refuse(`The Content-Type ${shown(header)} gives the parameter ${repeated} more than once; ${fix}, each parameter once.`)
  }
  // RFC 9110 §8.4: a body in a content coding the server does not decode is a 415 that names the
  // codings it reads (§12.5.3). Parsed as it came, a gzipped body would be refused as bad JSON,
  // and a file stored compressed, then served as if it were not.
  const contentCoding = headers['content-encoding']
  if (contentCoding !== undefined && contentCoding.trim().toLowerCase() !== 'identity') {
    throw problems.unsupportedMediaType(`The request's Content-Encoding ${shown(contentCoding)} is not accepted; send the body uncompressed, without Content-Encoding.`, { instance: path, headers: { 'accept-encoding': 'identity' } })
  }
  const charset = paramOf(mt, 'charset')
  if (charset !== undefined && !isUtf8(charset)) {
    throw refuse(`The Content-Type ${shown(header)} declares charset ${shown(charset)}, but only UTF-8 is accepted; encode the body in UTF-8 and send charset=UTF-8 or no charset.`)
  }
}

/**
 * The convention's methods table: GET, HEAD, DELETE and OPTIONS carry no request body. Taken
 * and dropped unread, it would let a client believe it said something (a DELETE's conditions).
 */
function refuseBody (request: FastifyRequest): void {
  if (!BODYLESS.has(request.method)) return
  const path = pathOf(request.url)
  throw problems.badRequest(`${withArticle(request.method, true)} request carries no body (the convention: GET, HEAD, DELETE and OPTIONS take none); send ${request.method} ${path} without one.`, { instance: path })
}

/**
 * The same rule for an OPTIONS that no route serves: the methods plugin answers it for every
 * path it knows, after this plugin's hook.
 */
export function checkOptionsBody (request: FastifyRequest, headers: IncomingHttpHeaders): void {
  if (request.method === 'OPTIONS' && hasBody(headers)) refuseBody(request)
}

/** RFC 6839 §3.1: a `+json` structured syntax suffix means the body is JSON. */
export function isJsonSuffix (mt: MediaType): boolean {
  return mt.subtype.endsWith('+json')
}

/**
 * Makes `application/json` bodies strictly UTF-8 (see `strictJsonParser`), unless the
 * application has set its own parser for it, which is kept.
 */
export function useStrictJsonParser (instance: FastifyInstance): void {
  try {
    // Replaces Fastify's default parser; throws when a custom one is there already.
    instance.addContentTypeParser('application/json', { parseAs: 'buffer' }, strictJsonParser(instance))
  } catch (err) {
    // The type and options are fixed, so only FST_ERR_CTP_ALREADY_PRESENT is expected here.
    /* c8 ignore next */
    if ((err as { code?: string }).code !== 'FST_ERR_CTP_ALREADY_PRESENT') throw err
  }
}

/**
 * Lets `instance` parse `+json` types exactly as its `application/json` (Fastify's own
 * parser, prototype poisoning refused, strictly UTF-8), so routes can accept e.g.
 * `application/merge-patch+json` (RFC 7396). A type that already has a parser keeps it.
 */
export function addJsonParsers (instance: FastifyInstance, types: readonly MediaType[]): void {
  for (const mt of types) {
    const essence = essenceOf(mt)
    if (!isJsonSuffix(mt) || instance.hasContentTypeParser(essence)) continue
    instance.addContentTypeParser(essence, { parseAs: 'buffer' }, strictJsonParser(instance))
  }
}
