import fp from 'fastify-plugin'
import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from 'fastify'
import type { Static } from '@sinclair/typebox'
import type { ValidateFunction } from 'ajv'
import { BULK_ACTIONS, BulkResponse, DEFAULT_MAX_OPERATIONS, type BulkActionValue } from '../../schemas/bulk.js'
import type { Preconditions } from '../conditional/index.js'
import { contextFromAjv, invalidData, problems } from '../problem/index.js'
import { claimed, claimOf, compileBodyValidator, NoQuery, storeProblem, type ResourceDefinition, type ServedResource, type WriteAction, type WriteCall, type WriteOp } from '../resource/index.js'
import { refuseUnknownOptions, type OptionKeys } from '../shared/options.js'
import { pathOf } from '../shared/url.js'
import { documentedBody } from './document.js'
import { duplicateIds, envelopeProblem, envelopeSchema, outsideEntities, type Envelope } from './envelope.js'
import { outcomeOf, rolledBack, type Operation, type Outcome } from './outcome.js'
import { compileValidators, prepare, type Validators } from './prepare.js'
import { needs } from '../shared/dependencies.js'

/** Per-collection settings of a bulk endpoint. */
export interface BulkEndpointOptions {
  /** Most operations in one request (conventions: Limits, "the endpoint states its own maximum"). Default the plugin's `maxOperations`. */
  maxOperations?: number
  /** The actions this endpoint supports: a subset of CREATE, UPDATE, CREATE_UPDATE, DELETE. Default all four. */
  actions?: readonly BulkActionValue[]
}

/** Options of the `bulk` plugin: `PATCH <collection path>` for every served resource. */
export interface BulkPluginOptions {
  /** Most operations in one request, for every endpoint without its own. Default 100. */
  maxOperations?: number
  /** By collection name: `false` serves no bulk endpoint for it, an object overrides the defaults. Default `{}`. */
  resources?: Readonly<Record<string, false | BulkEndpointOptions>>
}

const defaults = { maxOperations: DEFAULT_MAX_OPERATIONS, resources: {} }
const OPTION_KEYS: OptionKeys<BulkPluginOptions> = { maxOperations: true, resources: true }

type BulkResponseBody = Static<typeof BulkResponse>

interface Endpoint {
  served: ServedResource
  /** The definition, its item paths under the route prefix (as clients reach them). */
  def: ResourceDefinition
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

/** The write path's action for a bulk action (conventions: Bulk request body; Method rules 8, 10). */
const WRITE_ACTIONS: Readonly<Record<BulkActionValue, WriteAction>> = { CREATE: 'create', UPDATE: 'update', CREATE_UPDATE: 'put', DELETE: 'delete' }

/** Ends the transaction without keeping anything; never leaves `execute`. */
class Rollback extends Error {}

const isFailed = (op: Operation): boolean => op.outcome?.status === 'FAILED'

/**
 * Runs the prepared operations through the resource's write path in ONE transaction, with the
 * request's key (conventions: "Bulk endpoint"). ATOMIC commits only when every operation
 * succeeded. ISOLATED commits the operations that succeeded, each isolated by a savepoint;
 * one transaction rather than one per operation costs one BEGIN/COMMIT and one connection,
 * and a system failure half-way (answered with a 5xx) then leaves nothing stored instead of
 * successes nobody was told about. Sets every operation's outcome; throws only on a system
 * failure (or the 409 of a key used before).
 */
async function execute (e: Endpoint, request: FastifyRequest, ops: readonly Operation[], atomic: boolean): Promise<void> {
  const { def } = e
  const { writer, registry } = e.served
  const pending = ops.filter(op => op.outcome === null)
  // ATOMIC with an invalid operation: nothing to try.
  if (pending.length > 0 && !(atomic && pending.length < ops.length)) {
    const call: WriteCall = { ctx: request.executionContext, by: request.principal?.sub ?? null, atomic }
    const writes: WriteOp[] = pending.map(op => ({ action: WRITE_ACTIONS[op.action], id: op.id as string, values: op.values, ifMatch: op.ifMatch, ifNoneMatch: null }))
    const claim = claimOf(request, def.collection, def.path, 200, def.path)
    try {
      await claimed(e.served.store, e.served.keys, claim, async (tx) => {
        const results = await writer.run(tx, call, writes)
        pending.forEach((op, i) => { op.outcome = outcomeOf(def, op, results[i] as NonNullable<typeof results[number]>, registry) })
        // ATOMIC keeps all or nothing. ISOLATED without any success keeps nothing either,
        // so its idempotency key stays free, as after any request that changed nothing.
        const kept = atomic ? !ops.some(isFailed) : ops.some(op => op.outcome?.status === 'SUCCEEDED')
        if (!kept) throw new Rollback()
      }, 'The Svc-Idempotency-Key was already used for this bulk request; a bulk PATCH is not idempotent, so it is not run again. Send a new key to run it again.')
    } catch (err) {
      if (!(err instanceof Rollback)) throw err
    }
  }
  if (!atomic) return
  const failures = ops.filter(isFailed).map(op => op.index)
  if (failures.length === 0) return
  // An ATOMIC run stops at its first failure: the operations after it were never decided.
  for (const op of ops) if (!isFailed(op)) op.outcome = rolledBack(failures)
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
  const { def } = e
  const ops = body.operations.map((raw, i) => prepare(def, e.validators, raw, i))
  try {
    await execute(e, request, ops, body.transactionMode === 'ATOMIC')
  } catch (err) {
    // Unreachable database: 503; anything else unexpected: 500 (conventions: Bulk errors).
    throw storeProblem(err, def, 'write', '', {}, e.served.registry)
  }
  return responseOf(def, ops)
}

/**
 * Serves the convention's bulk endpoint, `PATCH <collection>`, for every resource of the
 * resource plugin (register it after that one), through each resource's write path: CREATE, UPDATE (full replacement of an
 * existing entity), CREATE_UPDATE (as PUT) and DELETE, ATOMIC or ISOLATED, with the same
 * validation, constraints, ETags, audit fields and execution contexts as the item routes.
 */
async function bulkPlugin (fastify: FastifyInstance, opts: BulkPluginOptions): Promise<void> {
  refuseUnknownOptions('bulk', opts, OPTION_KEYS)
  const maxOperations = positiveInteger('maxOperations', opts.maxOperations ?? defaults.maxOperations)
  const perResource: unknown = opts.resources === undefined ? defaults.resources : opts.resources
  if (typeof perResource !== 'object' || perResource === null || Array.isArray(perResource)) fail('resources', perResource, 'an object by collection name')
  const served = fastify.resources
  for (const name of Object.keys(perResource)) {
    if (!served.has(name)) fail(`resources.${name}`, name, `a served collection (${[...served.keys()].join(', ')})`)
  }

  for (const [collection, resource] of served) {
    // Paths in results (GET … and send its ETag) as clients reach the items: under the prefix.
    const def: ResourceDefinition = { ...resource.definition, itemPath: resource.itemPath }
    const given = Object.hasOwn(perResource, collection) ? (perResource as Record<string, unknown>)[collection] : undefined
    const settings = endpointOptions(`resources.${collection}`, given === undefined ? {} : given, maxOperations)
    if (settings === false) continue
    const endpoint: Endpoint = { served: resource, def, maxOperations: settings.maxOperations, validators: compileValidators(def) }
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
        auth: { scopes: [...def.api.scopes.write] },
        // No 412: If-Match or If-None-Match: * on a collection, which has no entity tag, can only
        // fail (checkCollectionPreconditions), so the document offers neither; conditions on
        // entities travel in operations[].ifMatch.
        problems: [409, 503],
        conventions: { contentTypes: ['application/json'] }
      } as FastifyContextConfig
    }, async (request) => await handle(endpoint, request))
  }
}

export default fp(needs('bulk', ['resource'], bulkPlugin), { fastify: '5.x', name: 'svc-bulk' })
