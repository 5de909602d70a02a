import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from 'fastify'
import type { Principal } from '../auth/verifiers.js'
import type { Preconditions } from '../conditional/index.js'
import type { CallingService } from '../conventions/service-header.js'
import type { CollectionQuery } from '../../model/query.js'
import type { CollectionState } from '../query/state.js'
import type { WebhookDelivery } from '../webhooks/index.js'

/*
 * Every per-request value of the suite lives in one object under one request decoration.
 * Fastify copies each value decoration onto every new request in its constructor, one
 * megamorphic keyed store and hidden-class transition apiece (some 250 machine instructions):
 * the seven the core used to declare cost a trivial request about 2,000 instructions, a third
 * of all its checks. The public names (`request.principal`, …) are accessors on the request
 * prototype over this object, which a request gets with its first value.
 */

const kState = Symbol('svc-conventions.requestState')

export type RouteConfig = FastifyContextConfig & { url?: string, method?: string }

export interface RequestState {
  /** The serving route's config, read once per request (`request.routeOptions` builds an object per read). */
  routeConfig: RouteConfig | null
  requestId: string | null
  executionContext: string
  callingService: CallingService | null
  idempotencyKey: string | null
  negotiatedType: string | null
  principal: Principal | null
  preconditions: Preconditions | null
  collectionQuery: CollectionQuery | null
  collection: CollectionState | null
  webhook: WebhookDelivery | null
}

/** The values a request has before any plugin sets one; every state starts as a copy (one shape for all). */
function emptyState (): RequestState {
  return {
    routeConfig: null,
    requestId: null,
    executionContext: '',
    callingService: null,
    idempotencyKey: null,
    negotiatedType: null,
    principal: null,
    preconditions: null,
    collectionQuery: null,
    collection: null,
    webhook: null
  }
}

const EMPTY: Readonly<RequestState> = Object.freeze(emptyState())

type Holder = Record<typeof kState, RequestState | null>

/** Declares the state's slot; every plugin keeping per-request values calls it (once is enough). */
export function useRequestState (fastify: FastifyInstance): void {
  if (!fastify.hasRequestDecorator(kState)) fastify.decorateRequest(kState, null)
}

/** The request's state, created with its first value. */
export function stateOf (request: FastifyRequest): RequestState {
  const holder = request as unknown as Holder
  let state = holder[kState]
  if (state === null || state === undefined) {
    state = emptyState()
    holder[kState] = state
  }
  return state
}

/** The config of the route serving `request` (Fastify's, with `url` and `method`). */
export function routeConfigOf (request: FastifyRequest): RouteConfig {
  const state = stateOf(request)
  let config = state.routeConfig
  if (config === null) {
    config = request.routeOptions.config as RouteConfig
    state.routeConfig = config
  }
  return config
}

/** Values a plugin makes public as `request[name]`. */
export type PublicField = Exclude<keyof RequestState, 'routeConfig' | 'requestId' | 'collection'>

/**
 * Declares `request[name]` as an accessor over the state: it reads the empty value until the
 * request has state, and a write creates the state. Throws, as any decoration does, when the
 * name is declared already.
 */
export function exposeField (fastify: FastifyInstance, name: PublicField): void {
  useRequestState(fastify)
  fastify.decorateRequest(name, {
    getter (this: FastifyRequest): RequestState[PublicField] {
      const state = (this as unknown as Holder)[kState]
      return (state ?? EMPTY)[name]
    },
    setter (this: FastifyRequest, value: RequestState[PublicField]): void {
      (stateOf(this) as Record<PublicField, unknown>)[name] = value
    }
  })
}
