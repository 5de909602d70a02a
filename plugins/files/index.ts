import fp from 'fastify-plugin'
import multipart from '@fastify/multipart'
import type { Readable } from 'node:stream'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { migrate } from '../../store/migrate.js'
import { FileContents } from '../../store/files.js'
import type { ServedResource } from '../resource/index.js'
import { needs } from '../shared/dependencies.js'
import { refuseUnknownOptions, type OptionKeys } from '../shared/options.js'
import { pathOf } from '../shared/url.js'
import { problems } from '../problem/index.js'
import { registerFileRoutes, type Endpoint } from './routes.js'
import { allowedTypes, storedType } from './types.js'
import { filenameOf, readRaw, sentDisposition } from './upload.js'

/** One resource's attached file. */
export interface FileEndpointOptions {
  /**
   * The entity's read-only field that describes the file (declared with `FileDescription()`
   * and listed in `readOnly`); also the last segment of the file's path,
   * `<item>/<field>`. Default `content`.
   */
  field?: string
  /** The media types a file may have (no wildcards; `charset=UTF-8` only on text). Required. */
  mediaTypes: readonly string[]
  /** Largest file in bytes; above it a 413. Default 10 MiB. */
  maxBytes?: number
  /** The table of the bytes. Default `<resource table>_<field>`. */
  table?: string
}

/** Options of the `files` plugin: by collection name, the resources that have a file attached. */
export interface FilesPluginOptions {
  resources: Readonly<Record<string, FileEndpointOptions>>
}

const OPTION_KEYS: OptionKeys<FilesPluginOptions> = { resources: true }
const ENDPOINT_KEYS: OptionKeys<FileEndpointOptions> = { field: true, mediaTypes: true, maxBytes: true, table: true }
const defaults = { field: 'content', maxBytes: 10 * 1024 * 1024 }
const SQL_NAME = /^[a-z_][a-z0-9_]{0,40}$/

function endpointOf (collection: string, s: ServedResource | undefined, value: unknown): Endpoint {
  const option = `resources.${collection}`
  if (s === undefined) throw new TypeError(`files plugin: ${option} must name a resource the resource plugin serves, got ${collection}`)
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TypeError(`files plugin: ${option} must be { mediaTypes, field?, maxBytes?, table? }, got ${JSON.stringify(value)}`)
  refuseUnknownOptions('files', value, ENDPOINT_KEYS, { path: `${option}.` })
  const o = value as FileEndpointOptions
  const field = o.field ?? defaults.field
  const def = s.definition
  if (typeof field !== 'string' || !(field in def.fields) || !def.api.readOnly.has(field)) {
    throw new TypeError(`files plugin: ${option}.field must be a read-only field of ${collection} declared with FileDescription(), got ${JSON.stringify(field)}`)
  }
  const maxBytes = o.maxBytes ?? defaults.maxBytes
  if (typeof maxBytes !== 'number' || !Number.isSafeInteger(maxBytes) || maxBytes < 1) throw new TypeError(`files plugin: ${option}.maxBytes must be a positive integer, got ${JSON.stringify(maxBytes)}`)
  const table = o.table ?? `${def.storage.table}_${field}`
  // The rule of every table option of the suite: PostgreSQL would cut a longer name at 63 bytes.
  if (typeof table !== 'string' || !SQL_NAME.test(table)) throw new TypeError(`files plugin: ${option}.table must be a lowercase SQL name of at most 41 characters, got ${JSON.stringify(table)}`)
  return { served: s, field, maxBytes, allowed: allowedTypes(`${option}.mediaTypes`, o.mediaTypes), contents: new FileContents(table, def.storage.table), url: `${def.path}/:${def.idParam}/${field}` }
}

/**
 * A file attached to each entity of a resource, at `<item>/<field>` (conventions: Headers,
 * Content-Disposition; reference contract: Document content): PUT stores it (the raw body with
 * its Content-Type and an optional Content-Disposition, or one `multipart/form-data` part
 * named `file`), GET and HEAD read it with its own type, a strong ETag of its bytes and
 * `Content-Disposition: attachment`, DELETE removes it. Uploads and deletes change the
 * entity's read-only description of the file through the resource's one write path, in the
 * transaction that stores the bytes: the entity's preconditions and rules apply to them.
 */
async function filesPlugin (fastify: FastifyInstance, opts: FilesPluginOptions): Promise<void> {
  refuseUnknownOptions('files', opts, OPTION_KEYS)
  const { resources } = opts
  if (typeof resources !== 'object' || resources === null || Array.isArray(resources) || Object.keys(resources).length === 0) {
    throw new TypeError(`files plugin: resources must be an object with at least one collection name, got ${JSON.stringify(resources)}`)
  }
  const endpoints = Object.entries(resources).map(([collection, o]) => endpointOf(collection, fastify.resources.get(collection), o))
  for (const e of endpoints) await migrate(e.served.store, e.contents.migrations(), { logger: fastify.log })
  const byUrl = new Map(endpoints.map(e => [e.url, e]))

  // A context of its own: its body parsers (any type read raw, multipart) serve these routes only.
  await fastify.register(async (files) => {
    files.removeAllContentTypeParsers()
    await files.register(multipart)
    files.addContentTypeParser('*', async (request: FastifyRequest, payload: Readable) => {
      const e = byUrl.get(request.routeOptions.url as string) as Endpoint
      const path = pathOf(request.url)
      // Fastify itself refuses a body without a Content-Type (415) before any parser runs.
      const sent = request.headers['content-type'] as string
      const mediaType = storedType(e.allowed, sent)
      if (mediaType === null) {
        throw problems.unsupportedMediaType(`The Content-Type ${JSON.stringify(sent)} is not accepted by ${request.method} ${path}; send the file as one of ${[...e.allowed.values()].join(', ')}, or as multipart/form-data.`, { instance: path })
      }
      const filename = filenameOf(sentDisposition(request))
      const length = request.headers['content-length']
      const bytes = await readRaw(payload, length === undefined ? null : Number(length), e, path)
      return { mediaType, filename, bytes }
    })
    for (const e of endpoints) registerFileRoutes(files, e)
  })
}

export { FileDescription } from './schema.js'
export { dispositionOf } from './download.js'
/*
 * Problem bodies (problem), the entity's write path and preconditions (resource, which
 * registers the conditional plugin), checked at registration.
 */
export default fp(needs('files', ['problem', 'resource'], filesPlugin), { fastify: '5.x', name: 'svc-files' })
