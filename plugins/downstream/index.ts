import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { createDownstream, type Downstream, type DownstreamClient, type PropagatedContext } from './client.js'
import type { DownstreamOptions } from './options.js'
import { once } from '../shared/dependencies.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The service's client, for calls made outside a request (jobs, start-up). */
    downstream: DownstreamClient
  }
  interface FastifyRequest {
    /** The client, its calls carrying this request's X-Request-ID and execution context. */
    downstream: Downstream
    [kView]: Downstream | null
  }
}

const kView = Symbol('svc-downstream.view')
const EXECUTION_CONTEXT = /^[a-z0-9_-]{1,100}$/

function header (request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name]
  return typeof value === 'string' ? value : undefined
}

/**
 * What a request passes on: the problem plugin's `requestId` and the conventions plugin's
 * `executionContext` when they are registered, else the request's own headers (the context
 * only when well-formed, as nobody checked it).
 */
function contextOf (request: FastifyRequest): PropagatedContext {
  const requestId = typeof request.requestId === 'string' ? request.requestId : header(request, 'x-request-id')
  const sent = header(request, 'svc-execution-context')
  const executionContext = typeof request.executionContext === 'string' && request.executionContext !== ''
    ? request.executionContext
    : sent !== undefined && EXECUTION_CONTEXT.test(sent) ? sent : undefined
  return { requestId, executionContext }
}

async function downstream (fastify: FastifyInstance, opts: DownstreamOptions): Promise<void> {
  const client = createDownstream(opts)
  fastify.addHook('onClose', async () => { await client.close() })
  // Registered again in a child context (another baseUrl, say), the child's routes get the
  // child's client: the values are set there, the decorators declared once, higher up.
  if (fastify.hasDecorator('downstream')) {
    fastify.downstream = client
    return
  }
  fastify.decorate('downstream', client)

  // A view is made on first use only: a request that calls nothing costs one null slot. Its
  // context is read at each call, so a view taken early still sends what hooks settled later.
  fastify.decorateRequest(kView, null)
  fastify.decorateRequest('downstream', {
    getter (this: FastifyRequest): Downstream {
      let v = this[kView]
      if (v === null) {
        v = this.server.downstream.with(() => contextOf(this))
        this[kView] = v
      }
      return v
    }
  })
}

export type { DownstreamOptions, RetryOptions, Sleep } from './options.js'
export type { Downstream, DownstreamClient, DownstreamCall, PropagatedContext } from './client.js'
export type { DownstreamResponse } from './answer.js'
export type { CallTarget, AnswerFacts } from './errors.js'
export { createDownstream } from './client.js'
export { DownstreamError, DownstreamResponseError, DownstreamProblemError, DownstreamTimeoutError, DownstreamTooLargeError, DownstreamConnectionError, DownstreamInvalidJsonError } from './errors.js'
export { backoff, retryAfter } from './retry.js'
// Needs no other plugin: with problem and conventions registered it passes on what they settled.
export default fp(once('downstream', downstream), { fastify: '5.x', name: 'svc-downstream' })
