import type { FastifyRequest } from 'fastify'
import type { ContextItem } from '../../../schemas/problem.js'
import { preconditionProblem, type Preconditions } from '../../conditional/index.js'
import { invalidData, problems } from '../../problem/index.js'
import { validationItems } from '../../problem/internal.js'
import { repeatedKeysDetail, repeatedSubCollectionKeys } from '../repeated-keys.js'
import { withArticle } from '../../shared/article.js'
import { storeProblem, type Operation } from '../problems.js'
import { claimOf, replayStatus } from '../../idempotency/index.js'
import type { Failure, WriteAction, WriteOp, WriteResult } from '../write/operations.js'
import type { Served } from './served.js'
import { newEtag } from '../write/writer.js'

type Row = Record<string, unknown>

/** For the document (openapi plugin): a write that answers with the entity's new ETag. */
export function newEtagHeader (status: number): Record<string, Record<string, unknown>> {
  // As the openapi plugin writes ETag everywhere else, so the document holds the header once.
  return { [status]: { etag: { type: 'string', maxLength: 1024, description: 'Strong entity tag of the representation; send it in If-Match / If-None-Match.' } } }
}

// The conventions plugin (a declared dependency) sets the execution context and the key of
// every request; the auth plugin, when registered, the principal (none: no createdBy).
const subOf = (r: FastifyRequest): string | null => r.principal?.sub ?? null
// The conditional plugin (registered by the resource plugin) parses them for every route of it.
export const preconditionsOf = (r: FastifyRequest): Preconditions => r.preconditions as Preconditions

/**
 * The 400 of a route's validation, with read-only fields named as such, and the violations of
 * the parts Fastify left unchecked after the one that failed (a query parameter beside a bad
 * body), as the problem plugin lists them for any other route.
 */
function validationProblem (s: Served, request: FastifyRequest, err: NonNullable<FastifyRequest['validationError']>): Error {
  const items: ContextItem[] = validationItems(request, err.validation, err.validationContext as string)
  for (const item of items) {
    if (item.source === 'body' && item.field !== undefined && s.def.api.readOnly.has(item.field) && item.message === 'is not allowed here') {
      item.message = 'is read-only; leave it out of the request body'
    }
  }
  return invalidData(items)
}

export function refuseInvalid (s: Served, request: FastifyRequest): void {
  if (request.validationError !== undefined && request.validationError !== null) throw validationProblem(s, request, request.validationError)
}

/**
 * Refuses an entity or a merge patch whose sub-collection items repeat a key (`pages` numbered
 * 1 twice): its schema cannot say so, and `PUT <item>/<field>` refuses the same.
 */
export function refuseRepeatedKeys (s: Served, values: Row): void {
  if (s.def.api.subCollections.length === 0) return
  const repeated = repeatedSubCollectionKeys(s.def, values, '')
  if (repeated.length > 0) throw invalidData(repeated, repeatedKeysDetail(s.def, repeated))
}

/** What a write did, as `storeProblem` words its conflicts: a transition's values are the stored ones, not a body's. */
function operationOf (op: WriteOp): Operation {
  return op.action === 'delete' ? 'delete' : op.action === 'transition' ? 'transition' : 'write'
}

/** A write's failure as the item routes answer it (the bulk endpoint words the same failures for its operations). */
export function failureProblem (s: Served, method: string, path: string, id: string, result: WriteResult, failure: Failure): unknown {
  const { name } = s.def
  switch (failure.kind) {
    case 'not-found':
      return problems.notFound(method === 'PATCH'
        ? `No ${name} has the id ${id}; PATCH only changes an existing one (PUT creates).`
        : `No ${name} has the id ${id}; check the id.`, { instance: path })
    case 'deleted':
      return problems.conflict(`The ${name} ${id} is deleted; restore it first (POST ${s.itemPath(s.def, id)}/restore), then change it.`, {
        instance: path,
        context: [{ code: 'ENTITY_DELETED', message: `must be ${withArticle(name)} that is not deleted` }]
      })
    case 'invalid-transition': {
      const detail = failure.current === null
        ? `The ${name} ${id} is not deleted, so there is nothing to ${failure.action}; only a deleted ${name} can be restored.`
        : `The ${name} ${id} is ${failure.current}, and ${failure.action} applies to ${failure.allowed.length === 1 ? 'one that is' : 'one that is one of'} ${failure.allowed.join(', ')}.`
      return problems.conflict(detail, {
        instance: path,
        context: [{
          code: 'INVALID_STATE_TRANSITION',
          message: failure.current === null ? `${failure.action} applies to a deleted ${name} only` : `${failure.action} applies from ${failure.allowed.join(', ')} only`,
          ...(failure.current === null ? {} : { value: failure.current })
        }]
      })
    }
    case 'invalid':
      return invalidData(failure.items, `The ${name} would be invalid after this patch; see context for each value.`)
    case 'conflict':
      return storeProblem(failure.error, s.def, operationOf(result.op), id, result.values, s.registry, (itemId) => s.itemPath(s.def, itemId))
    // The conditional plugin refuses these first; a write path rule all the same.
    /* c8 ignore next 2 */
    case 'precondition-required':
      return problems.preconditionRequired(`${method} ${path} requires the If-Match header; GET the resource and send its ETag in If-Match.`, { instance: path })
    case 'precondition-failed':
      return preconditionProblem({ method, path, header: failure.header, creates: result.op.action === 'create' })
  }
}

/**
 * Runs one item write through the resource's write path with the claim of its key: the entity
 * as stored, or null when a DELETE found nothing. When the key answers for an earlier request,
 * `{ etag }` of that request's answer (null when it had none), which a retry answers again.
 * A write answered 204 carries no body, so it asks the database for the entity's id and ETag
 * alone.
 * A failure is thrown as its problem, and nothing is written. One statement writes the entity,
 * claims the key, adds the outbox rows and makes the operation's attached write (a file's bytes
 * beside the entity's description of it) (`Writer.one`), after a read of the entity when the
 * decision needs it.
 */
export async function writeItem (s: Served, request: FastifyRequest, op: WriteOp, path: string, status: number): Promise<Row | null> {
  const claim = claimOf(request, s.def.collection, path, status)
  if (claim !== null) {
    // The new ETag is drawn before the write, so that the key keeps it for a retry's answer.
    op = { ...op, etag: newEtag() }
    claim.etag = op.etag
  }
  const call = { ctx: request.executionContext, by: subOf(request), atomic: true, requestId: request.requestId }
  let outcome
  try {
    outcome = await s.writer.one(s.store, call, op, claim === null ? null : s.keys.writeClaim(claim), status === 204 ? 'etag' : 'row')
  } catch (err) {
    throw storeProblem(err, s.def, operationOf(op), op.id, {}, s.registry, (itemId) => s.itemPath(s.def, itemId))
  }
  if ('replay' in outcome) {
    // Another method, path or body: the idempotency plugin's own 409 says which.
    replayStatus(outcome.replay, claim as NonNullable<typeof claim>)
    return replayed(outcome.replay.etag)
  }
  if (outcome.failure !== null) throw failureProblem(s, request.method, path, op.id, outcome, outcome.failure)
  return outcome.row
}

/** What a retry answers with: the first answer's ETag, when it had one. */
function replayed (etag: string | null): Row | null {
  return etag === null ? null : { etag }
}

/** A write of `request`'s item with the request's preconditions (`transition`: the action's name, for one). */
export function itemOp (request: FastifyRequest, action: WriteAction, id: string, values: Row, transition?: string): WriteOp {
  const pre = preconditionsOf(request)
  // Fields added only when there is something to say: the common operation keeps the one
  // shape every other caller's has, so the write path's property reads stay monomorphic.
  const op: WriteOp = { action, id, values, ifMatch: pre.ifMatch, ifNoneMatch: pre.ifNoneMatch }
  if ((pre.ifUnmodifiedSince ?? null) !== null) op.ifUnmodifiedSince = pre.ifUnmodifiedSince
  if (transition !== undefined) op.transition = transition
  return op
}
