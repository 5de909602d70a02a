import fp from 'fastify-plugin'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Page } from '../../model/query.js'
import { Id } from '../../schemas/types.js'
import { JobTable, type JobRow, type JobSummaryView, type JobView, type NewJob, type StoredJobView } from '../../store/jobs.js'
import { migrate } from '../../store/migrate.js'
import type { ClaimPart, HELD } from '../../store/statement-parts.js'
import type { Store, Queryable } from '../../store/types.js'
import { problems, unavailableProblem } from '../problem/index.js'
import { collectionQueryOf, createFieldMap, registerCollection } from '../query/index.js'
import { missingDependencies, needs } from '../shared/dependencies.js'
import { NoQuery } from '../shared/no-query.js'
import { retentionOptions, schedulePurge } from '../shared/purge-timer.js'
import { optionChecks, refuseUnknownOptions, type OptionChecks, type OptionKeys } from '../shared/options.js'
import { preferences } from './prefer.js'
import { Runner, type JobHandler } from './runner.js'
import { standIn, withResults } from './stored-results.js'
import { Job, JobCollection, type JobBody, type JobSummaryBody } from './schema.js'

/** Options of the `jobs` plugin: durable background work on the store, and its status monitor. */
export interface JobsPluginOptions {
  /** The store holding the jobs, the same one their work writes to. Required. */
  store: Store
  /** Path of the status monitor collection; a job is at `<path>/<jobId>`. `false` serves no monitor routes. Default `/jobs`. */
  path?: string | false
  /**
   * The token scopes that let a caller see the jobs of each collection, by collection name
   * (the read scopes of the resources they work on). Default: the read scopes of the
   * resources the resource plugin serves, when it is registered before.
   */
  readScopes?: Readonly<Record<string, readonly string[]>>
  /** Whether this instance runs jobs; `false` only accepts and shows them. Default true. */
  worker?: boolean
  /** How long an instance holds a job without renewing it, in ms: after it, another instance takes the job up. At most 2 147 483 647 (about 24.8 days). Default 30 000. */
  leaseMillis?: number
  /**
   * How often an idle instance looks for work, in ms: a safety net, since the database notifies
   * the instances of every job written (LISTEN/NOTIFY), except behind PgBouncer, where this
   * poll, and the wake of the instance that accepted the job, are all there is. It also bounds
   * how late a job whose instance died is taken up once its lease ran out. At most 2 147 483 647
   * (about 24.8 days, the longest a timer waits). Default 5000.
   */
  pollMillis?: number
  /** Jobs one instance runs at once. Default 1. */
  concurrency?: number
  /** Claims of a job whose database stays unavailable before it ends FAILED. Default 5. */
  maxAttempts?: number
  /**
   * How long a job waits to be claimed again after the database was unavailable to it, in ms;
   * each later retry waits twice as long as the one before, at most `leaseMillis`, so a
   * failover of seconds does not spend every attempt. 0 retries at once. Default 1000.
   */
  retryMillis?: number
  /** Table name (its steps are in `<table>_steps`). Default `jobs`. */
  table?: string
  /** How long an ended job stays readable, in ms; then it is deleted with its steps. Default 7 days. */
  retention?: number
  /** How often ended jobs past the retention are deleted, in ms (at most 2 147 483 647, about 24.8 days); 0 never. Default the retention, at most 1 h. */
  purgeInterval?: number
}

/** What other plugins and handlers use: define kinds of work, enqueue jobs. */
export interface Jobs {
  readonly table: JobTable
  /** The path of a job's status monitor, or null without monitor routes. */
  monitorPath: (id: string) => string | null
  /** Runs jobs of `kind` with `handler` (register it before the app is ready). */
  define: (kind: string, handler: JobHandler) => void
  /**
   * Writes a new PENDING job in `db`, the transaction that accepts the work (so a job exists
   * exactly when its acceptance commits); any instance then runs it, woken by the database's
   * notification. Call `wake()` after the transaction commits to start it here at once, without
   * waiting for the notification (or, behind PgBouncer, for the poll). With `claim` (an
   * idempotency key's, `claimedInWrite`), the job and the claim are one statement, and the job
   * is written only when the claim is taken: `HELD` when the key answers for another request.
   */
  enqueue: {
    (db: Queryable, job: NewJob): Promise<JobRow>
    (db: Queryable, job: NewJob, claim: ClaimPart): Promise<JobRow | typeof HELD>
  }
  /** Looks for work now on this instance. */
  wake: () => void
}

declare module 'fastify' {
  interface FastifyInstance {
    jobs: Jobs
  }
  interface FastifyRequest {
    /** The request says `Prefer: respond-async` (RFC 7240): it accepts a 202 and a job to follow. */
    respondAsync: boolean
  }
  interface FastifyReply {
    /**
     * Answers 202 Accepted with the job (conventions: "POST accepted for asynchronous
     * processing returns 202"): its status monitor in `Link: <…>; rel="monitor"` (the
     * convention keeps `Location` for 201 and 3xx), `Preference-Applied: respond-async` when
     * the request asked for it, and the job as the body.
     */
    accepted: (job: JobView) => FastifyReply
  }
}

const HOUR = 60 * 60 * 1000
const defaults = { path: '/jobs', worker: true, leaseMillis: 30_000, pollMillis: 5000, concurrency: 1, maxAttempts: 5, retryMillis: 1000, table: 'jobs', retention: 7 * 24 * HOUR }
const OPTION_KEYS: OptionKeys<JobsPluginOptions> = { store: true, path: true, readScopes: true, worker: true, leaseMillis: true, pollMillis: true, concurrency: true, maxAttempts: true, retryMillis: true, table: true, retention: true, purgeInterval: true }
const KIND = /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/

const checks = optionChecks('jobs plugin')
const fail: OptionChecks['fail'] = checks.fail
const positiveInteger: OptionChecks['positiveInteger'] = checks.positiveInteger
const timerMillis: OptionChecks['timerMillis'] = checks.timerMillis

/** A job as its monitor shows it. */
function jobBody (job: JobView): JobBody {
  return {
    id: job.id,
    ref: `svc:job::${job.id}`,
    kind: job.kind,
    collection: job.collection,
    status: job.status,
    operationCount: job.operationCount,
    completedCount: job.completedCount,
    createdDateTime: job.createdDateTime,
    createdBy: job.subject === '' ? null : job.subject,
    modifiedDateTime: job.modifiedDateTime,
    completedDateTime: job.completedDateTime,
    result: job.result as JobBody['result'],
    problem: job.problem as JobBody['problem']
  }
}

/** A job as the list of jobs shows it: its monitor's body without the result. */
function jobSummary (job: JobSummaryView): JobSummaryBody {
  const { result: _result, ...summary } = jobBody({ ...job, result: null })
  return summary
}

/** A job's monitor answer as JSON text, its result as it is stored (stored-results.ts). */
function jobJson (reply: FastifyReply, job: StoredJobView): string {
  // The route's serializer writes JSON text.
  return withResults(reply.serialize(jobBody({ ...job, result: standIn(job.result, 0) })) as string, [job.result])
}

async function jobsPlugin (fastify: FastifyInstance, opts: JobsPluginOptions): Promise<void> {
  refuseUnknownOptions('jobs', opts, OPTION_KEYS)
  const { store } = opts
  if (typeof store !== 'object' || store === null || typeof store.transaction !== 'function') fail('store', store, 'a Store (createStore)')
  const path = opts.path ?? defaults.path
  if (path !== false && (typeof path !== 'string' || !/^(\/[A-Za-z0-9._~-]+)+$/.test(path))) fail('path', path, 'an absolute path such as /v1/jobs, or false')
  const worker = opts.worker ?? defaults.worker
  if (typeof worker !== 'boolean') fail('worker', worker, 'a boolean')
  // Timers: the lease is renewed every third of it, and the idle poll waits pollMillis.
  const leaseMillis = timerMillis('leaseMillis', opts.leaseMillis ?? defaults.leaseMillis)
  const pollMillis = timerMillis('pollMillis', opts.pollMillis ?? defaults.pollMillis)
  const concurrency = positiveInteger('concurrency', opts.concurrency ?? defaults.concurrency)
  const maxAttempts = positiveInteger('maxAttempts', opts.maxAttempts ?? defaults.maxAttempts)
  const retryMillis = timerMillis('retryMillis', opts.retryMillis ?? defaults.retryMillis, 'at once')
  const tableName = opts.table ?? defaults.table
  if (typeof tableName !== 'string' || !/^[a-z_][a-z0-9_]{0,40}$/.test(tableName)) fail('table', tableName, 'a lowercase SQL name of at most 41 characters')
  const given = opts.readScopes
  if (given !== undefined && (typeof given !== 'object' || given === null || Object.values(given).some(s => !Array.isArray(s) || s.some(x => typeof x !== 'string')))) {
    fail('readScopes', given, 'an object of scope lists by collection')
  }

  const { retention, purgeInterval } = retentionOptions('jobs', opts, defaults.retention)
  // The monitor reads a job in the request's execution context, which the conventions plugin
  // sets: without it every job would be a 404 (the resource plugin needs it for the same reason).
  if (path !== false && !fastify.hasPlugin('svc-conventions')) throw missingDependencies('jobs', ['conventions'])

  const table = new JobTable(tableName, retention)
  await migrate(store, table.migrations())
  // Ended jobs go after their retention, in batches, by one instance at a time (store/purge.ts).
  schedulePurge(fastify, purgeInterval, async () => await table.purge(store), {
    done: 'jobs: ended jobs past their retention deleted',
    failed: 'jobs: deleting ended jobs failed; trying again later'
  })
  const handlers = new Map<string, JobHandler>()
  const runner = new Runner({ store, table, handlers, leaseMillis, pollMillis, concurrency, maxAttempts, retryMillis, log: fastify.log })
  const prefix = fastify.prefix
  const monitorPath = (id: string): string | null => path === false ? null : `${prefix}${path}/${encodeURIComponent(id)}`

  async function enqueue (db: Queryable, job: NewJob): Promise<JobRow>
  async function enqueue (db: Queryable, job: NewJob, claim: ClaimPart): Promise<JobRow | typeof HELD>
  async function enqueue (db: Queryable, job: NewJob, claim?: ClaimPart): Promise<JobRow | typeof HELD> {
    return claim === undefined ? await table.insert(db, job) : await table.insert(db, job, claim)
  }

  fastify.decorate('jobs', {
    table,
    monitorPath,
    define (kind, handler) {
      if (typeof kind !== 'string' || !KIND.test(kind)) throw new TypeError(`jobs.define: kind must be UPPER_SNAKE_CASE, got ${JSON.stringify(kind)}`)
      if (typeof handler !== 'function') throw new TypeError(`jobs.define: the handler of ${kind} must be an async function`)
      if (handlers.has(kind)) throw new TypeError(`jobs.define: ${kind} has a handler already`)
      handlers.set(kind, handler)
    },
    enqueue,
    wake: () => { if (worker) runner.wake() }
  } satisfies Jobs)

  if (!fastify.hasRequestDecorator('respondAsync')) fastify.decorateRequest('respondAsync', false)
  fastify.decorateReply('accepted', function (this: FastifyReply, job: JobView): FastifyReply {
    const link = monitorPath(job.id)
    if (link !== null) this.header('link', `<${link}>; rel="monitor"`)
    if (this.request.respondAsync) this.header('preference-applied', 'respond-async')
    return this.code(202).send(jobBody(job))
  })

  fastify.addHook('onRequest', async (request) => {
    const prefer = request.headers.prefer
    if (prefer !== undefined) request.respondAsync = preferences(prefer).has('respond-async')
  })

  if (worker) {
    fastify.addHook('onReady', async () => { await runner.start() })
    // Before the store closes (registered earlier, its hook runs later): jobs in flight end or are given back.
    fastify.addHook('onClose', async () => { await runner.stop() })
  }

  if (path !== false) registerMonitor(fastify, path, table, store, given)
}

/** The read scopes of each collection: given, or those of the resources served by the resource plugin. */
function readScopesOf (fastify: FastifyInstance, given: Readonly<Record<string, readonly string[]>> | undefined): Readonly<Record<string, readonly string[]>> {
  if (given !== undefined) return given
  const served = (fastify as unknown as { resources?: ReadonlyMap<string, { definition: { api: { scopes: { read: readonly string[] } } } }> }).resources
  return Object.fromEntries([...served ?? []].map(([collection, s]) => [collection, s.definition.api.scopes.read]))
}

/**
 * `GET <path>/:jobId` and `GET <path>`: a job is visible only to the token subject that created
 * it, in the execution context it was created in (404 for anyone else), and only with the read
 * scopes of its collection (403); the list holds the caller's jobs of the collections whose
 * read scopes the token has (403 when it has none of them), newest first.
 */
function registerMonitor (fastify: FastifyInstance, path: string, table: JobTable, store: Store, given: Readonly<Record<string, readonly string[]>> | undefined): void {
  const subjectOf = (r: FastifyRequest): string => r.principal?.sub ?? ''
  const granted = (r: FastifyRequest, scopes: readonly string[]): boolean => scopes.every(s => r.principal?.scopes.includes(s) === true)
  let scopes: Readonly<Record<string, readonly string[]>> | undefined
  const scopesOf = (): Readonly<Record<string, readonly string[]>> => (scopes ??= readScopesOf(fastify, given))
  // The document names them: a job is read with its collection's read scopes, any collection's
  // (none to name when one collection needs none).
  const scopeAlternatives = (): string[][] => {
    // Not through scopesOf's cache: the document may be made before the last resource registers.
    const sets = Object.values(readScopesOf(fastify, given))
    if (sets.some(s => s.length === 0)) return []
    return [...new Map(sets.map(s => [s.join(' '), [...s]])).values()]
  }

  fastify.get(`${path}/:jobId`, {
    schema: { tags: ['jobs'], querystring: NoQuery, summary: 'Get a job', params: Type.Object({ jobId: Id() }), response: { 200: Job } },
    config: { auth: { scopes: [] }, problems: [403, 404], openapi: { scopeAlternatives } }
  }, async (request, reply) => {
    const id = (request.params as { jobId: string }).jobId
    const instance = `${path}/${encodeURIComponent(id)}`
    let job: StoredJobView | null
    try {
      job = await table.getStored(store, request.executionContext, subjectOf(request), id)
    } catch (err) {
      throw unavailableProblem(err)
    }
    if (job === null) throw problems.notFound(`No job of yours has the id ${id}; check the id (a job is visible to its creator only).`, { instance })
    // A collection the read scopes do not name has no readable jobs, as the list leaves them out.
    const needed = scopesOf()[job.collection]
    if (needed === undefined) {
      throw problems.forbidden(`No read scopes are set for ${job.collection} (the jobs plugin's readScopes, or its resource's), so GET ${instance}, a job on ${job.collection}, cannot be read.`, { instance })
    }
    if (!granted(request, needed)) {
      throw problems.forbidden(`The access token does not grant ${needed.join(', ')}, which GET ${instance}, a job on ${job.collection}, requires.`, { instance })
    }
    return await reply.type('application/json; charset=utf-8').send(jobJson(reply, job))
  })

  const fields = createFieldMap([
    { path: 'id', type: 'string', filterable: false },
    { path: 'status', type: 'enum', enumValues: ['PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED'] },
    { path: 'createdDateTime', type: 'date-time', filterable: false, sortable: true }
  ])
  registerCollection(fastify, {
    url: path,
    collection: { fields, offset: false, defaultOrdering: [{ field: 'createdDateTime', direction: 'desc' }] },
    search: false,
    schema: { tags: ['jobs'], summary: 'List your jobs', response: { 200: JobCollection } },
    config: { auth: { scopes: [] }, problems: [403], openapi: { scopeAlternatives } },
    handler: async function (request, reply) {
      const all = scopesOf()
      const collections = Object.keys(all).filter(c => granted(request, all[c] as readonly string[]))
      if (collections.length === 0) {
        throw problems.forbidden(`The access token grants none of the scopes that GET ${path} requires: ${Object.values(all).map(s => s.join(' ')).join(' or ')}.`, { instance: path })
      }
      const q = collectionQueryOf(request)
      let page: Page<JobSummaryView>
      try {
        page = await table.page(store, q, fields, { ctx: request.executionContext, subject: subjectOf(request), collections })
      } catch (err) {
        throw unavailableProblem(err)
      }
      return await reply.sendCollection({ ...page, items: page.items.map(jobSummary) })
    }
  })
}

export { Job, JobCollection, JobSummary, type JobBody, type JobSummaryBody } from './schema.js'
export type { JobHandler, JobRun } from './runner.js'
export type { JobRow, JobView, JobSummaryView, NewJob, JobStatus } from '../../store/jobs.js'
// The monitor routes answer collections through the query plugin; refusals are problems.
export default fp(needs('jobs', ['problem', 'query'], jobsPlugin), { fastify: '5.x', name: 'svc-jobs' })
