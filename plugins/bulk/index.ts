import fp from 'fastify-plugin'
import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from 'fastify'
import type { Static } from '@sinclair/typebox'
import type { ValidateFunction } from 'ajv'
import { BULK_ACTIONS, BulkResponse, DEFAULT_MAX_OPERATIONS, type BulkActionValue } from '../../schemas/bulk.js'
import type { Store } from '../../store/types.js'
import type { Preconditions } from '../conditional/index.js'
import { fingerprintOf, type IdempotencyClaim } from '../idempotency/keys.js'
import { invalidData, problems } from '../problem/errors.js'
import type { ResourceDefinition } from '../resource/define.js'
import { storeProblem } from '../resource/errors.js'
import { compileBodyValidator, NoQuery } from '../resource/write-schemas.js'
import { contextFromAjv } from '../problem/validation-context.js'
import { pathOf } from '../shared/url.js'
import { documentedBody } from './document.js'
import { duplicateIds, envelopeProblem, envelopeSchema, outsideEntities, type Envelope } from './envelope.js'
import { execute, type BulkCall, type BulkTarget } from './execute.js'
import type { Operation, Outcome } from './outcome.js'
import { compileValidators, prepare, type Validators } from './prepare.js'
import { BatchStatements } from './statements.js'

/** Per-collection settings of a bulk endpoint. */
export interface BulkEndpointOptions {
  /** Most operations in one request (conventions: Limits, "the endpoint states its own maximum"). Default the plugin's `maxOperations`. */
  maxOperations?: number
  /** The actions this endpoint supports: a subset of CREATE, UPDATE, CREATE_UPDATE, DELETE. Default all four. */
  actions?: readonly BulkActionValue[]
}

/** Options of the `bulk` plugin: `PATCH <collection path>` for every served resource. */
export interface BulkPluginOptions {
  /** The store the resource plugin serves the resources from. Required. */
  store: Store
  /** Most operations in one request, for every endpoint without its own. Default 100. */
  maxOperations?: number
  /** By collection name: `false` serves no bulk endpoint for it, an object overrides the defaults. Default `{}`. */
  resources?: Readonly<Record<string, false | BulkEndpointOptions>>
}

const defaults = { maxOperations: DEFAULT_MAX_OPERATIONS, resources: {} }

type BulkResponseBody = Static<typeof BulkResponse>

interface Endpoint extends BulkTarget {
  maxOperations: number
  validators: Validators
}

function fail (option: string, value: unknown, rule: string): never {
  throw new TypeError(`bulk plugin: ${option} must be ${rule}, got ${JSON.stringify(value) ?? String(value)}`)
}

function positiveInteger (option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) fail(option, value, 'a positive integer')
  return value
}

function endpointOptions (option: string, value: unknown, maxOperations: number): Required<BulkEndpointOptions> | false {
  if (value === false) return false
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(option, value, 'false or { maxOperations?, actions? }')
  const o = value as BulkEndpointOptions
  const actions: unknown = o.actions ?? BULK_ACTIONS
  if (!Array.isArray(actions) || actions.length === 0 || new Set(actions).size !== actions.length ||
    actions.some(a => !(BULK_ACTIONS as readonly unknown[]).includes(a))) {
    fail(`${option}.actions`, actions, `a non-empty subset of ${BULK_ACTIONS.join(', ')} without repeats`)
  }
  return { maxOperations: positiveInteger(`${option}.maxOperations`, o.maxOperations ?? maxOperations), actions }
}

// Values other plugins set when they are registered; each has a safe meaning when they are not.
const contextOf = (r: FastifyRequest): string => r.executionContext
const subOf = (r: FastifyRequest): string | null => r.principal?.sub ?? null
const keyOf = (r: FastifyRequest): string | null => r.idempotencyKey ?? null

/**
 * RFC 9110 §13.1.1/§13.1.2 on the collection itself: it always has a current representation
 * but no entity tag that names a state, so If-Match holds only as `*` and If-None-Match: *
 * never. Conditions on entities travel in `operations[].ifMatch`.
 */
function checkCollectionPreconditions (request: FastifyRequest, path: string): void {
  const pre = request.preconditions as Preconditions
  if ((pre.ifMatch !== null && pre.ifMatch !== '*') || pre.ifNoneMatch === '*') {
    throw problems.preconditionFailed(`The conditional headers cannot hold for ${path}: a collection has no entity tag. Send each entity's ETag in operations[].ifMatch instead.`, { instance: path })
  }
}

function claimOf (def: ResourceDefinition, request: FastifyRequest): IdempotencyClaim | null {
  const key = keyOf(request)
  if (key === null) return null
  return { ctx: contextOf(request), caller: subOf(request) ?? '', resource: def.collection, key, method: request.method, target: def.path, fingerprint: fingerprintOf(request.body), instance: def.path, status: 200 }
}

/** The 200 body: one result per operation, in request order (conventions: "Bulk response body"). */
function responseOf (def: ResourceDefinition, ops: readonly Operation[]): BulkResponseBody {
  let ok = 0
  const operations = ops.map((op) => {
    const result = op.outcome as Outcome
    if (result.status === 'SUCCEEDED') ok++
    // A CREATE that did not happen has no entity to name.
    const id = op.action === 'CREATE' && result.status === 'FAILED' ? null : op.id
    return { operationId: op.operationId, action: op.action, entityId: id, entityRef: id === null ? null : def.ref(id), result }
  })
  return { status: ok === ops.length ? 'SUCCEEDED' : ok === 0 ? 'FAILED' : 'PARTIAL', operations }
}

async function handle (e: Endpoint, request: FastifyRequest): Promise<BulkResponseBody> {
  const invalid = request.validationError
  if (invalid !== undefined && invalid !== null) {
    throw invalid.validationContext === 'body' ? envelopeProblem(invalid.validation, request.body, e.maxOperations) : invalidData(contextFromAjv(invalid.validation, invalid.validationContext))
  }
  const body = request.body as Envelope
  const duplicates = duplicateIds(body.operations)
  if (duplicates !== null) throw duplicates
  checkCollectionPreconditions(request, pathOf(request.url))
  const ops = body.operations.map((raw, i) => prepare(e.def, e.validators, raw, i))
  const call: BulkCall = { ctx: contextOf(request), by: subOf(request), atomic: body.transactionMode === 'ATOMIC', claim: claimOf(e.def, request) }
  try {
    await execute(e, call, ops)
  } catch (err) {
    // Unreachable database: 503; anything else unexpected: 500 (conventions: Bulk errors).
    throw storeProblem(err, e.def, 'write', '', {}, e.registry)
  }
  return responseOf(e.def, ops)
}

/**
 * Serves the convention's bulk endpoint, `PATCH <collection>`, for every resource of the
 * resource plugin (register it after that one): CREATE, UPDATE (full replacement of an
 * existing entity), CREATE_UPDATE (as PUT) and DELETE, ATOMIC or ISOLATED, with the same
 * validation, constraints, ETags, audit fields and execution contexts as the item routes.
 */
async function bulkPlugin (fastify: FastifyInstance, opts: BulkPluginOptions): Promise<void> {
  const store = opts.store
  if (typeof store !== 'object' || store === null || typeof store.transaction !== 'function') {
    throw new TypeError(`bulk plugin: store must be a Store (createStore), got ${String(store)}`)
  }
  const maxOperations = positiveInteger('maxOperations', opts.maxOperations ?? defaults.maxOperations)
  const perResource: unknown = opts.resources === undefined ? defaults.resources : opts.resources
  if (typeof perResource !== 'object' || perResource === null || Array.isArray(perResource)) fail('resources', perResource, 'an object by collection name')
  const served = fastify.resources
  for (const name of Object.keys(perResource)) {
    if (!served.has(name)) fail(`resources.${name}`, name, `a served collection (${[...served.keys()].join(', ')})`)
  }
  const registry = new Map([...served.values()].map(s => [s.definition.table, s.definition]))

  for (const [collection, { definition, repository, itemPath }] of served) {
    // Paths in results (GET … and send its ETag) as clients reach the items: under the prefix.
    const def: ResourceDefinition = { ...definition, itemPath }
    const given = Object.hasOwn(perResource, collection) ? (perResource as Record<string, unknown>)[collection] : undefined
    const settings = endpointOptions(`resources.${collection}`, given === undefined ? {} : given, maxOperations)
    if (settings === false) continue
    const endpoint: Endpoint = {
      def,
      store,
      repo: repository,
      batch: new BatchStatements(def),
      keys: fastify.idempotency,
      registry,
      maxOperations: settings.maxOperations,
      validators: compileValidators(def)
    }
    const envelope: ValidateFunction = compileBodyValidator(envelopeSchema(settings.maxOperations, settings.actions), outsideEntities)
    const noQuery: ValidateFunction = compileBodyValidator(NoQuery)
    fastify.patch(def.path, {
      schema: {
        tags: [def.collection],
        summary: `Create, replace or delete ${def.collection} in bulk`,
        description: `At most ${settings.maxOperations} operations; transactionMode ATOMIC (all or nothing) or ISOLATED (default). Answers 200 with one result per operation.`,
        querystring: NoQuery,
        body: documentedBody(def, settings.actions, settings.maxOperations),
        response: { 200: BulkResponse }
      },
      // The envelope is checked here; each entity by its own operation, so a bad one fails alone.
      validatorCompiler: ({ httpPart }) => httpPart === 'body' ? envelope : noQuery,
      attachValidation: true,
      config: {
        auth: { scopes: [...def.scopes.write] },
        // No 412: If-Match or If-None-Match: * on a collection, which has no entity tag, can only
        // fail (checkCollectionPreconditions), so the document offers neither; conditions on
        // entities travel in operations[].ifMatch.
        problems: [409, 503],
        conventions: { contentTypes: ['application/json'] }
      } as FastifyContextConfig
    }, async (request) => await handle(endpoint, request))
  }
}

export { BatchStatements, type BatchRow } from './statements.js'
export default fp(bulkPlugin, { fastify: '5.x', name: 'svc-bulk', dependencies: ['svc-resource'] })
