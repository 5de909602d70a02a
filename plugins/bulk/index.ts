import { randomUUID } from 'node:crypto'
import fp from 'fastify-plugin'
import { Type } from '@sinclair/typebox'
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ValidateFunction } from 'ajv'
import { BULK_ACTIONS, BulkResponse, DEFAULT_MAX_OPERATIONS, type BulkActionValue } from '../../schemas/bulk.js'
import type { Preconditions } from '../conditional/index.js'
import { Job, type JobRow } from '../jobs/index.js'
import { contextFromAjv, invalidData, problems } from '../problem/index.js'
import { claimed, claimedInWrite, claimOf, type IdempotencyRecord } from '../idempotency/index.js'
import type { ResourceDefinition, WriteCall } from '../resource/index.js'
import { compileBodyValidator, storeProblem } from '../resource/internal.js'
import { NoQuery } from '../shared/no-query.js'
import { optionChecks, refuseUnknownOptions, type OptionChecks, type OptionKeys } from '../shared/options.js'
import { pathOf } from '../shared/url.js'
import { documentedBody } from './document.js'
import { duplicateIds, envelopeProblem, envelopeSchema, outsideEntities, tooMany, type Envelope } from './envelope.js'
import { applyAlone, applyInTx, hopeless, planOf, prepared, responseOf, Rollback, runBulkJob, settleAtomic, type BulkResponseBody, type Endpoint } from './execute.js'
import type { Operation } from './outcome.js'
import { compileValidators } from './prepare.js'
import { needs } from '../shared/dependencies.js'

/** Per-collection settings of a bulk endpoint. */
export interface BulkEndpointOptions {
  /** Most operations in one request (conventions: Limits, "the endpoint states its own maximum"). Default the plugin's `maxOperations`. */
  maxOperations?: number
  /** Most operations in one request accepted as a job (`Prefer: respond-async`). Default the plugin's `maxAsyncOperations`. */
  maxAsyncOperations?: number
  /** The actions this endpoint supports: a subset of CREATE, UPDATE, CREATE_UPDATE, DELETE. Default all four. */
  actions?: readonly BulkActionValue[]
}

/** Options of the `bulk` plugin: `PATCH <collection path>` for every served resource. */
export interface BulkPluginOptions {
  /** Most operations in one request, for every endpoint without its own. Default 100. */
  maxOperations?: number
  /**
   * Most operations in a request sent with `Prefer: respond-async`, which is then accepted as a
   * job (202, its status monitor in `Link`) when the jobs plugin is registered before this one.
   * Default 10 000.
   */
  maxAsyncOperations?: number
  /**
   * Largest body of a bulk request, in bytes. Default the server's `bodyLimit`, or 32 MiB when
   * asynchronous requests are served, since their operations are many (10 000 entities).
   */
  bodyLimit?: number
  /** By collection name: `false` serves no bulk endpoint for it, an object overrides the defaults. Default `{}`. */
  resources?: Readonly<Record<string, false | BulkEndpointOptions>>
}

const defaults = { maxOperations: DEFAULT_MAX_OPERATIONS, maxAsyncOperations: 10_000, asyncBodyLimit: 32 * 1024 * 1024, resources: {} }
const OPTION_KEYS: OptionKeys<BulkPluginOptions> = { maxOperations: true, maxAsyncOperations: true, bodyLimit: true, resources: true }
const ENDPOINT_KEYS: OptionKeys<BulkEndpointOptions> = { maxOperations: true, maxAsyncOperations: true, actions: true }

const anyHeaders = (): boolean => true

/** The kind of the jobs that run asynchronous bulk requests. */
export const BULK_JOB = 'BULK'

const checks = optionChecks('bulk plugin')
const fail: OptionChecks['fail'] = checks.fail
const positiveInteger: OptionChecks['positiveInteger'] = checks.positiveInteger

function endpointOptions (option: string, value: unknown, maxOperations: number, maxAsyncOperations: number): Required<BulkEndpointOptions> | false {
  if (value === false) return false
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(option, value, 'false or { maxOperations?, maxAsyncOperations?, actions? }')
  // Misspelt, a collection's setting would be ignored and the plugin's kept.
  refuseUnknownOptions('bulk', value, ENDPOINT_KEYS, { path: `${option}.` })
  const o = value as BulkEndpointOptions
  const actions: unknown = o.actions ?? BULK_ACTIONS
  if (!Array.isArray(actions) || actions.length === 0 || new Set(actions).size !== actions.length ||
    actions.some(a => !(BULK_ACTIONS as readonly unknown[]).includes(a))) {
    fail(`${option}.actions`, actions, `a non-empty subset of ${BULK_ACTIONS.join(', ')} without repeats`)
  }
  return { maxOperations: positiveInteger(`${option}.maxOperations`, o.maxOperations ?? maxOperations), maxAsyncOperations: positiveInteger(`${option}.maxAsyncOperations`, o.maxAsyncOperations ?? maxAsyncOperations), actions }
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

/**
 * Runs the operations through the resource's write path with the request's key (conventions:
 * "Bulk endpoint"): in ONE statement, its own transaction, when they can go so (new entities
 * only, none of which breaks a constraint, or on a server updates alone or deletions alone of
 * entities still as read just before: `applyAlone`), else in ONE transaction. ATOMIC
 * commits only when every operation succeeded.
 * ISOLATED commits the operations that succeeded, each isolated by a savepoint; one
 * transaction rather than one per operation costs one BEGIN/COMMIT and one connection, and a
 * system failure half-way (answered with a 5xx) then leaves nothing stored instead of
 * successes nobody was told about. A transaction that keeps nothing rolls back, so its key
 * stays free, as after any request that changed nothing.
 */
async function execute (e: Endpoint, request: FastifyRequest, ops: readonly Operation[], atomic: boolean): Promise<void> {
  if (!hopeless(ops, atomic)) {
    const { def } = e
    const call: WriteCall = { ctx: request.executionContext, by: request.principal?.sub ?? null, atomic, requestId: request.requestId }
    const pending = ops.filter(op => op.outcome === null)
    const plan = await planOf(e, call, pending, 'alone')
    const claim = claimOf(request, def.collection, def.path, 200, def.path)
    try {
      if (!await applyAlone(e, plan, pending, claim, reused)) {
        await claimed(e.served.store, e.served.keys, claim, async (tx) => {
          if (!await applyInTx(e, tx, plan, pending)) throw new Rollback()
        }, reused)
      }
    } catch (err) {
      if (!(err instanceof Rollback)) throw err
    }
  }
  if (atomic) settleAtomic(ops)
}

/** The 409 of a bulk request whose key was used before, naming the job that request started (its 202). */
function reused (first: IdempotencyRecord): string {
  return first.status === 202
    ? `The Svc-Idempotency-Key was already used to start ${first.instance}; GET it instead of sending the bulk request again.`
    : 'The Svc-Idempotency-Key was already used for a bulk request; a bulk PATCH is not idempotent, so it is not run again. Send a new key to run it again.'
}

/**
 * Accepts the request as a job (reference contract: "Asynchronous bulk"): the job is written by
 * one statement, with the claim of the request's key when it has one, so that the job exists
 * exactly when the key is taken and the 202 sent. A key used before is a 409 naming that job,
 * as for a POST.
 */
async function accept (fastify: FastifyInstance, e: Endpoint, request: FastifyRequest, reply: FastifyReply, body: Envelope): Promise<FastifyReply> {
  const { def } = e
  const id = randomUUID()
  const instance = fastify.jobs.monitorPath(id) ?? def.path
  const job = {
    ctx: request.executionContext,
    id,
    kind: BULK_JOB,
    collection: def.collection,
    subject: request.principal?.sub ?? '',
    input: { transactionMode: body.transactionMode ?? 'ISOLATED', operations: body.operations },
    operationCount: body.operations.length,
    requestId: request.requestId
  }
  const claim = claimOf(request, def.collection, instance, 202, def.path)
  const { store } = e.served
  const written = claim === null
    ? await fastify.jobs.enqueue(store, job)
    : (await claimedInWrite(store, e.served.keys, claim, async (held) => await fastify.jobs.enqueue(store, job, held.part), reused) as { value: JobRow }).value
  fastify.jobs.wake()
  return reply.accepted(written)
}

async function handle (fastify: FastifyInstance, e: Endpoint, request: FastifyRequest, reply: FastifyReply): Promise<BulkResponseBody | FastifyReply> {
  const invalid = request.validationError
  const async = e.maxAsyncOperations !== null && request.respondAsync
  const max = async ? e.maxAsyncOperations as number : e.maxOperations
  if (invalid !== undefined && invalid !== null) {
    throw invalid.validationContext === 'body' ? envelopeProblem(invalid.validation, request.body, max, e.maxAsyncOperations) : invalidData(contextFromAjv(invalid.validation, invalid.validationContext))
  }
  const body = request.body as Envelope
  if (body.operations.length > max) throw tooMany(body.operations.length, max, async ? null : e.maxAsyncOperations)
  const duplicates = duplicateIds(body.operations)
  if (duplicates !== null) throw duplicates
  checkCollectionPreconditions(request, pathOf(request.url))
  const ops = async ? null : prepared(e, body.operations)
  try {
    if (ops === null) return await accept(fastify, e, request, reply, body)
    await execute(e, request, ops, body.transactionMode === 'ATOMIC')
  } catch (err) {
    // Unreachable database: 503; anything else unexpected: 500 (conventions: Bulk errors).
    throw storeProblem(err, e.def, 'write', '', {}, e.served.registry)
  }
  return responseOf(e.def, ops)
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
  const maxAsyncOperations = positiveInteger('maxAsyncOperations', opts.maxAsyncOperations ?? defaults.maxAsyncOperations)
  // Asynchronous requests need somewhere to run: the jobs plugin, registered before.
  const jobs = fastify.hasDecorator('jobs')
  const serverLimit = fastify.initialConfig.bodyLimit as number
  const bodyLimit = positiveInteger('bodyLimit', opts.bodyLimit ?? (jobs ? Math.max(defaults.asyncBodyLimit, serverLimit) : serverLimit))
  const endpoints = new Map<string, Endpoint>()
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
    const settings = endpointOptions(`resources.${collection}`, given === undefined ? {} : given, maxOperations, maxAsyncOperations)
    if (settings === false) continue
    const endpoint: Endpoint = { served: resource, def, maxOperations: settings.maxOperations, maxAsyncOperations: jobs ? settings.maxAsyncOperations : null, validators: compileValidators(def) }
    endpoints.set(collection, endpoint)
    const largest = Math.max(settings.maxOperations, endpoint.maxAsyncOperations ?? 0)
    const envelope: ValidateFunction = compileBodyValidator(envelopeSchema(largest, settings.actions), outsideEntities)
    const noQuery: ValidateFunction = compileBodyValidator(NoQuery)
    fastify.patch(def.path, {
      bodyLimit,
      schema: {
        tags: [def.collection],
        summary: `Create, replace or delete ${def.collection} in bulk`,
        description: `At most ${settings.maxOperations} operations; transactionMode ATOMIC (all or nothing) or ISOLATED (default). Answers 200 with one result per operation.` +
          (endpoint.maxAsyncOperations === null ? '' : ` With Prefer: respond-async, up to ${endpoint.maxAsyncOperations} operations are accepted as a job: 202, its status monitor in Link (rel="monitor"), Preference-Applied: respond-async, and the job, whose result is the same bulk response once it SUCCEEDED.`),
        querystring: NoQuery,
        ...(endpoint.maxAsyncOperations === null ? {} : { headers: Type.Object({ prefer: Type.Optional(Type.String({ maxLength: 200, description: '`respond-async`: accept the request as a job (202) instead of answering when it is done.' })) }) }),
        body: documentedBody(def, settings.actions, largest),
        response: endpoint.maxAsyncOperations === null ? { 200: BulkResponse } : { 200: BulkResponse, 202: Job }
      },
      // The envelope is checked here; each entity by its own operation, so a bad one fails alone.
      // The Prefer header is documented only: any value but respond-async is ignored (RFC 7240 §2).
      validatorCompiler: ({ httpPart }) => httpPart === 'body' ? envelope : httpPart === 'headers' ? anyHeaders : noQuery,
      attachValidation: true,
      config: {
        auth: { scopes: [...def.api.scopes.write] },
        // No 412: If-Match or If-None-Match: * on a collection, which has no entity tag, can only
        // fail (checkCollectionPreconditions), so the document offers neither; conditions on
        // entities travel in operations[].ifMatch.
        problems: [409, 503],
        conventions: { contentTypes: ['application/json'] }
      } as FastifyContextConfig
    }, async (request, reply) => await handle(fastify, endpoint, request, reply))
  }
  if (jobs) fastify.jobs.define(BULK_JOB, async (run) => await runBulkJob(endpoints.get(run.job.collection) as Endpoint, run))
}

export default fp(needs('bulk', ['resource'], bulkPlugin), { fastify: '5.x', name: 'svc-bulk' })
