import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from 'fastify'
import type { Static, TSchema } from '@sinclair/typebox'
import type { WriteClaim } from '../../store/statement-parts.js'
import type { Tx } from '../../store/types.js'
import { problems, unavailableProblem } from '../problem/index.js'
import { isUtf8, paramOf, parseMediaType, type MediaType } from '../shared/media-type.js'
import { strictJsonParser } from '../problem/internal.js'
import { optionChecks, shownValue } from '../shared/options.js'
import { webhookPath } from './paths.js'
import type { WebhookDelivery } from './index.js'
import { MAX_DELIVERY_ID_LENGTH, type WebhookVerifier } from './verifier.js'

/** Methods a producer may demand instead of POST; each carries a body. */
export type WebhookMethod = 'POST' | 'PUT' | 'PATCH'

/**
 * Applies a delivery. Its writes go through `tx`, the transaction that also records the
 * delivery id: they commit together, and a throw rolls both back (the producer's retry
 * can then succeed). A thrown `ProblemError` is the answer (e.g. 404 for an unknown entity).
 */
export type WebhookHandler<S extends TSchema> = (payload: Static<S>, tx: Tx, request: FastifyRequest) => Promise<void>

/**
 * Applies a delivery in a statement of its own, with no transaction held open: `once` records
 * the delivery id as part of that statement (a resource's `writer.one(store, call, op, once)`
 * takes it; a delivery with nothing to write calls `once.take(db)`), so the effect and the
 * record commit together. Null when the delivery has no id. Resolves false when the delivery
 * was applied before (its id is held). A thrown `ProblemError` is the answer, and nothing is
 * recorded.
 */
export type WebhookApply<S extends TSchema> = (payload: Static<S>, once: WriteClaim<true> | null, request: FastifyRequest) => Promise<boolean>

/** One webhook consumer endpoint. */
export interface WebhookDefinition<S extends TSchema = TSchema> {
  /** Producer name: `/_webhooks/<producer>/`; also the scope of its delivery ids. */
  producer?: string
  /** Event kind: `/_webhooks/<producer>/<event>`, or without a producer the generic `/_webhooks/<event>`. */
  event?: string
  /** Only when the producer demands another one. Default `POST`. */
  method?: WebhookMethod
  /** Checks each delivery over its raw bytes: `standardWebhooks(...)`, `sharedToken(...)` or your own. Required. */
  verifier: WebhookVerifier
  /** TypeBox schema of the payload, checked after verification (400 Invalid Data). Default: any JSON. */
  schema?: S
  /** Applies the delivery in the transaction that records its id. This or `apply` is required. */
  handler?: WebhookHandler<S>
  /** Applies the delivery in one statement that records its id. This or `handler` is required. */
  apply?: WebhookApply<S>
  /** Largest body in bytes. Default the plugin's `bodyLimit`. */
  bodyLimit?: number
  /** More route config (e.g. `rateLimit`); `auth`, `conventions` (no User-Agent, Accept, Content-Type or idempotency-key rule) and `openapi.internal` are always set. */
  config?: FastifyContextConfig
}

const METHODS: readonly string[] = ['POST', 'PUT', 'PATCH']
const EMPTY = Buffer.alloc(0)

function isObject (value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Checks a definition at once, so a mistake stops the boot naming the path. */
function check (def: Partial<Record<keyof WebhookDefinition, unknown>>, path: string): void {
  const { fail } = optionChecks(`registerWebhook ${path}`)
  if (def.method !== undefined && !METHODS.includes(def.method as string)) fail('method', def.method, METHODS.join(', ') + ' or absent')
  if (typeof def.verifier !== 'function') fail('verifier', def.verifier, 'a function such as standardWebhooks({ secrets })')
  if ((typeof def.handler === 'function') === (typeof def.apply === 'function')) {
    if (def.handler !== undefined) fail('handler', def.handler, 'an async function (payload, tx, request), or absent with apply')
    fail('apply', def.apply, 'an async function (payload, once, request), or absent with handler')
  }
  if (def.schema !== undefined && !isObject(def.schema)) fail('schema', def.schema, 'a TypeBox schema')
  if (def.bodyLimit !== undefined && (!Number.isSafeInteger(def.bodyLimit) || (def.bodyLimit as number) < 1)) fail('bodyLimit', def.bodyLimit, 'a positive integer of bytes')
  if (def.config !== undefined && !isObject(def.config)) fail('config', def.config, 'an object')
}

/** `application/json` or any `+json` type (the payload is the producer's, its media type too); null for another. */
function jsonType (header: string | undefined): MediaType | null {
  const type = header === undefined ? null : parseMediaType(header)
  return type !== null && type.type === 'application' && (type.subtype === 'json' || type.subtype.endsWith('+json')) ? type : null
}

/**
 * What the interface document says of the endpoint beyond its schema: the verifier's
 * headers and checks, and the transport rule the route's onRequest hook applies.
 */
function documentation (verifier: WebhookVerifier, allowHttp: boolean): { description: string, headers?: Record<string, unknown> } {
  const transport = allowHttp
    ? 'Plain HTTP is accepted too (the webhooks plugin\'s allowHttp, for local development).'
    : 'HTTPS only: a delivery that did not arrive over TLS, directly or through a proxy the server trusts (Fastify\'s trustProxy) that sends X-Forwarded-Proto: https, gives 403.'
  const own = verifier.documentation
  return own === undefined ? { description: transport } : { description: `${own.description} ${transport}`, headers: own.headers }
}

/**
 * Adds a webhook consumer endpoint (conventions: Webhook consumer endpoints) in a
 * context of its own, where the body is kept as the bytes received: verified first,
 * then parsed as JSON, checked against `schema`, and applied once per delivery id.
 * Needs the webhooks plugin (registered before, in this or a parent context).
 * Throws a TypeError at once for a bad path or definition.
 */
export function registerWebhook<S extends TSchema> (fastify: FastifyInstance, def: WebhookDefinition<S>): void {
  if (!isObject(def)) throw new TypeError(`registerWebhook: the definition must be an object, got ${shownValue(def)}`)
  const path = webhookPath(def.producer, def.event)
  check(def, path)
  // On a generic path the event name is the only name the producer has here.
  const producer = (def.producer ?? def.event) as string

  fastify.register(async (child) => {
    if (!child.hasDecorator('webhooks')) {
      throw new Error(`registerWebhook ${path}: register the webhooks plugin first; it records the delivery ids in the store`)
    }
    const { store, deliveries, allowHttp, bodyLimit } = child.webhooks

    // Signatures cover the exact bytes and Fastify keeps no raw body (fastify#5491): in
    // this context only, every body stays a Buffer until it is verified.
    child.removeAllContentTypeParsers()
    child.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => { done(null, body) })
    const parseJson = strictJsonParser(child)

    child.route({
      method: def.method ?? 'POST',
      url: path,
      bodyLimit: def.bodyLimit ?? bodyLimit,
      schema: {
        ...(def.schema === undefined ? {} : { body: def.schema }),
        response: { 204: { description: 'The delivery is acknowledged: applied now, or before.', type: 'null' } }
      },
      // No bearer token: the producer proves itself by its secret (conventions:
      // Authentication 5); the operation is internal in the interface. A producer is no user
      // agent, gets no body to negotiate, and its media type is checked after its signature;
      // the other header rules hold, so Svc-Execution-Context selects the data partition here
      // as on every other route. 401 (signature), 403 (not HTTPS), 404/400: documented.
      config: {
        ...def.config,
        auth: false,
        conventions: { userAgent: false, accept: false, contentType: false, idempotencyKey: false },
        problems: [401, 403, 404, 503, ...(def.config?.problems ?? [])],
        openapi: { ...def.config?.openapi, internal: true, ...documentation(def.verifier, allowHttp) }
      },
      onRequest: async (request) => {
        // Before the body is read. `protocol` is https over TLS, or behind a proxy Fastify trusts.
        // A scheme is case-insensitive (RFC 3986 §3.1): a proxy may send `HTTPS`.
        if (!allowHttp && request.protocol.toLowerCase() !== 'https') {
          throw problems.forbidden(`Webhook deliveries to ${path} are accepted over HTTPS only; send it to the https address.`, { instance: path })
        }
      },
      preValidation: async (request) => {
        const rawBody = Buffer.isBuffer(request.body) ? request.body : EMPTY
        const verified = await def.verifier(rawBody, request)
        if (verified === null) throw problems.unauthorized('The delivery could not be authenticated; it must come from the producer, with its secret.')
        // The suite's verifiers refuse a longer id naming their header; a verifier of the
        // application's own is held to the same bound, which the store's key needs.
        if (verified.id !== null && verified.id.length > MAX_DELIVERY_ID_LENGTH) {
          throw problems.badRequest(`The delivery's id is ${verified.id.length} characters long, and at most ${MAX_DELIVERY_ID_LENGTH} are kept; the producer must send a shorter one.`)
        }
        const type = jsonType(request.headers['content-type'])
        if (type === null) {
          throw problems.unsupportedMediaType(`Deliveries to ${path} are JSON; send Content-Type: application/json.`)
        }
        // As on every other route (RFC 9110 §8.4): the bytes are parsed as they came, so a
        // compressed body would be refused as bad JSON, or one merely labelled so applied.
        const coding = request.headers['content-encoding']
        if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') {
          throw problems.unsupportedMediaType(`Deliveries to ${path} are not content-encoded, and this one has Content-Encoding ${JSON.stringify(coding)}; send the body uncompressed, without Content-Encoding.`, { headers: { 'accept-encoding': 'identity' } })
        }
        // JSON between systems is UTF-8 (RFC 8259 §8.1): bytes of another charset, decoded as
        // UTF-8, would be stored as other text than the producer's.
        const charset = paramOf(type, 'charset')
        if (charset !== undefined && !isUtf8(charset)) {
          throw problems.unsupportedMediaType(`Deliveries to ${path} are JSON in UTF-8, and the Content-Type declares charset ${JSON.stringify(charset)}; send the body in UTF-8, with charset=UTF-8 or none.`)
        }
        if (rawBody.length === 0) {
          throw problems.malformedJson(`The delivery has no body; deliveries to ${path} are a JSON document.`)
        }
        // Parsed from the verified bytes, never re-serialized: the handler sees what was signed.
        // Bytes that are not UTF-8 are a 400, not text with U+FFFD in their place.
        request.body = await new Promise((resolve, reject) => {
          parseJson(request, rawBody, (err, value) => { if (err === null) resolve(value); else reject(err) })
        })
        request.webhook = { producer, id: verified.id, rawBody }
      },
      handler: async (request, reply) => {
        const delivery = request.webhook as WebhookDelivery
        try {
          const applied = def.apply !== undefined
            ? await def.apply(request.body as Static<S>, delivery.id === null ? null : deliveries.writeClaim(producer, delivery.id), request)
            : await store.transaction(async (tx) => {
              // First statement of the transaction: a replay, here or on another instance,
              // waits for this one and then finds the id, so the effect happens once.
              if (delivery.id !== null && !await deliveries.record(tx, producer, delivery.id)) return false
              await (def.handler as WebhookHandler<S>)(request.body as Static<S>, tx, request)
              return true
            })
          if (!applied) request.log.info({ producer, deliveryId: delivery.id }, 'webhook: delivery applied before; acknowledged again')
        } catch (err) {
          // A store that cannot serve now is a 503 the producer retries, as on every route.
          throw unavailableProblem(err)
        }
        return await reply.code(204).send()
      }
    })
  })
}
