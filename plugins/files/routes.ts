import { createHash } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { FileContents, FileFacts } from '../../store/files.js'
import type { AttachedPart } from '../../store/statement-parts.js'
import { Id } from '../../schemas/types.js'
import { evaluateRead, notModified, type Preconditions } from '../conditional/index.js'
import { problems, unavailableProblem } from '../problem/index.js'
import type { ServedResource, WriteOp } from '../resource/index.js'
import { NoQuery } from '../shared/no-query.js'
import { withArticle } from '../shared/article.js'
import { pathOf } from '../shared/url.js'
import { admits, dispositionOf } from './download.js'
import type { AllowedTypes } from './types.js'
import { readMultipart, type Upload } from './upload.js'

/** One resource's file endpoint, its options checked. */
export interface Endpoint {
  served: ServedResource
  field: string
  maxBytes: number
  allowed: AllowedTypes
  contents: FileContents
  /** The route's URL pattern, `<collection path>/:<id>/<field>`. */
  url: string
}

const NO_CONTENT = Type.Null({ description: 'No Content' })
const BINARY = { type: 'string', format: 'binary' }
// As the openapi plugin writes ETag everywhere else, so the document holds the header once:
// after a write the entity's new tag, on a download the tag of the file's bytes.
const ETAG = { etag: { type: 'string', maxLength: 1024, description: 'Strong entity tag of the representation; send it in If-Match / If-None-Match.' } }

// The resource plugin registers the conditional plugin, which parses these for every route.
const preconditionsOf = (r: FastifyRequest): Preconditions => r.preconditions as Preconditions

/** A strong entity tag of the bytes themselves (RFC 9110 §8.8.3): equal bytes, equal tag. */
function etagOf (bytes: Buffer): string {
  return `"${createHash('sha256').update(bytes).digest('base64url')}"`
}

export function registerFileRoutes (fastify: FastifyInstance, e: Endpoint): void {
  const { served: s, field, contents } = e
  const def = s.definition
  const params = Type.Object({ [def.idParam]: Id() })
  const tags = [def.collection]
  const idOf = (request: FastifyRequest): string => (request.params as Record<string, string>)[def.idParam] as string
  const types = [...e.allowed.values()]
  const noFile = (path: string): Error => problems.notFound(`No file is attached at ${path}; PUT one there first.`, { instance: path })
  const read = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn()
    } catch (err) {
      throw unavailableProblem(err)
    }
  }

  /**
   * 406 when Accept does not admit the stored type, else the file's ETag, which a 304 and a 412
   * carry too. The representation's own headers are `represent`'s, for a 200 only: on a problem
   * `Content-Disposition: attachment` would name the problem body as the file.
   */
  const describe = (request: FastifyRequest, reply: FastifyReply, file: FileFacts, path: string): void => {
    if (!admits(request.headers.accept, file.mediaType)) {
      throw problems.notAcceptable(`The file at ${path} is ${file.mediaType}, which the Accept header ${JSON.stringify(request.headers.accept)} does not admit; accept ${file.mediaType} or */*.`, { instance: path })
    }
    reply.header('etag', file.etag)
  }
  const represent = (reply: FastifyReply, file: FileFacts): void => {
    reply.header('content-type', file.mediaType)
    reply.header('content-disposition', dispositionOf(file.filename))
  }

  const readOptions = {
    schema: { tags, summary: `Download the ${field} of ${withArticle(def.name)}`, querystring: NoQuery, params },
    config: {
      auth: { scopes: [...def.api.scopes.read] },
      // 406 is the route's own: Accept is checked against the stored type. 412: a stale If-Match
      // (evaluateRead), so the document lists both conditional headers and the 304 too.
      problems: [404, 406, 412],
      // The type produced is the stored one: Accept is checked against it here.
      conventions: { accept: false },
      openapi: {
        // The bytes have an ETag but no modification date: If-Unmodified-Since is not weighed.
        modificationDate: false,
        content: { 200: Object.fromEntries(types.map(t => [t, BINARY])) },
        responseHeaders: {
          200: {
            'content-disposition': { type: 'string', maxLength: 2048, description: 'attachment, with the file\'s name in filename (ASCII) and filename* (UTF-8) when it has one.' },
            ...ETAG
          }
        },
        description: 'The file with its own Content-Type; 406 when Accept does not admit it (a wildcard does), 404 when none is attached. HEAD answers the same headers without the bytes.'
      }
    } as FastifyContextConfig
  }

  // HEAD reads the facts alone, so it is a route of its own rather than Fastify's GET without a body.
  fastify.head(e.url, readOptions, async (request, reply) => {
    const path = pathOf(request.url)
    const facts = await read(async () => await contents.facts(s.store, request.executionContext, idOf(request)))
    if (facts === null) throw noFile(path)
    describe(request, reply, facts, path)
    if (evaluateRead(preconditionsOf(request), facts.etag, path)) return await notModified(reply).send()
    represent(reply, facts)
    reply.header('content-length', facts.byteCount)
    return await reply.send()
  })

  fastify.get(e.url, { ...readOptions, exposeHeadRoute: false }, async (request, reply) => {
    const id = idOf(request)
    const path = pathOf(request.url)
    const ctx = request.executionContext
    const pre = preconditionsOf(request)
    // A client that may hold the bytes already: the facts first, the bytes only when sent.
    if (pre.ifNoneMatch !== null || pre.ifMatch !== null) {
      const facts = await read(async () => await contents.facts(s.store, ctx, id))
      if (facts === null) throw noFile(path)
      describe(request, reply, facts, path)
      if (evaluateRead(pre, facts.etag, path)) return await notModified(reply).send()
    }
    const file = await read(async () => await contents.get(s.store, ctx, id))
    if (file === null) throw noFile(path)
    describe(request, reply, file, path)
    represent(reply, file)
    return await reply.send(file.bytes)
  })

  const write = { scopes: [...def.api.scopes.write] }
  const conditional = { requireIfMatch: def.api.requireIfMatch, createWithIfNoneMatch: false }
  const required = def.api.requireIfMatch ? [428] : []

  fastify.put(e.url, {
    schema: { tags, summary: `Upload the ${field} of ${withArticle(def.name)}`, querystring: NoQuery, params, response: { 204: NO_CONTENT } },
    config: {
      auth: write,
      problems: [404, 409, 412, 413, 415, ...required],
      conditional,
      conventions: { contentTypes: [...types, 'multipart/form-data'] },
      openapi: {
        body: {
          ...Object.fromEntries(types.map(t => [t, BINARY])),
          'multipart/form-data': {
            type: 'object',
            required: ['file'],
            additionalProperties: false,
            properties: { file: { ...BINARY, description: `The file, the only part, with its own Content-Type (${types.join(', ')}) and filename.` } }
          }
        },
        headers: { 'content-disposition': { type: 'string', maxLength: 2048, description: 'attachment; filename="…" (filename*=UTF-8\'\'… for a name that is not ASCII): the file\'s name, kept and sent back on download.' } },
        responseHeaders: { 204: ETAG },
        description: `At most ${e.maxBytes} bytes (413 above), of the types listed (415 for others). The ${def.name}'s ${field} and ETag change.`
      }
    } as FastifyContextConfig
  }, async (request, reply) => {
    const id = idOf(request)
    const path = pathOf(request.url)
    const upload = request.isMultipart() ? await readMultipart(request, e, path) : request.body as Upload | undefined
    if (upload === undefined || upload === null) {
      throw problems.unsupportedMediaType(`PUT ${path} takes the file as the body, with its Content-Type (${types.join(', ')}), or as multipart/form-data.`, { instance: path })
    }
    const file = { ...upload, byteCount: upload.bytes.length, etag: etagOf(upload.bytes) }
    const description = { mediaType: file.mediaType, filename: file.filename, byteCount: String(file.byteCount), modifiedDateTime: new Date().toISOString() }
    const row = await s.writeItem(request, opOf(request, id, { [field]: description }, contents.putPart(file)), 204)
    if (row !== null) reply.header('etag', row.etag as string)
    return await reply.code(204).send()
  })

  fastify.delete(e.url, {
    schema: { tags, summary: `Remove the ${field} of ${withArticle(def.name)}`, querystring: NoQuery, params, response: { 204: NO_CONTENT } },
    config: { auth: write, problems: [404, 409, 412, ...required], conditional, openapi: { responseHeaders: { 204: ETAG } } } as FastifyContextConfig
  }, async (request, reply) => {
    const id = idOf(request)
    const row = await s.writeItem(request, opOf(request, id, { [field]: null }, contents.removePart()), 204)
    if (row !== null) reply.header('etag', row.etag as string)
    return await reply.code(204).send()
  })
}

/** A change of the entity's file description under the request's preconditions, with the file's own write (`attached`). */
function opOf (request: FastifyRequest, id: string, values: Record<string, unknown>, attached: AttachedPart): WriteOp {
  const pre = preconditionsOf(request)
  const op: WriteOp = { action: 'change', id, values, ifMatch: pre.ifMatch, ifNoneMatch: pre.ifNoneMatch, attached }
  if ((pre.ifUnmodifiedSince ?? null) !== null) op.ifUnmodifiedSince = pre.ifUnmodifiedSince
  return op
}
